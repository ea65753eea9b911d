import { utf8Length } from '@flowgate/core';
import { STEP_LIMITS } from '@flowgate/flows';
import { z } from 'zod';
import { isRunError, RunError } from '../errors.js';
import type { StepContext } from '../ports.js';
import { fromJson, type JsonValue, type Value, VMap } from '../values.js';
import { parseConfig, type StepPorts } from './common.js';

const L = STEP_LIMITS.kv;

export const kvConfigSchema = z.strictObject({
  operation: z.enum(['get', 'put', 'delete']),
  key: z.string().min(1).max(L.keyLengthMax),
  value: z.unknown().optional(),
  'ttl-s': z.number().int().min(1).max(L.ttlSecondsMax).optional(),
});

async function port<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isRunError(error)) throw error;
    throw new RunError('kv_failed', `the key-value store could not ${operation} the key`);
  }
}

/** Runs a :kv step: `{:value …}` — the stored value for :get (nil when absent), the written value for :put. */
export async function runKvStep(rawConfig: unknown, ctx: StepContext, ports: StepPorts): Promise<Value> {
  const config = parseConfig(kvConfigSchema, rawConfig, ':kv');
  if (config.operation !== 'put' && (config.value !== undefined || config['ttl-s'] !== undefined)) {
    throw new RunError('step_config_invalid', ':value and :ttl-s only apply to :put');
  }
  switch (config.operation) {
    case 'get': {
      const value = await port('read', () => ports.kv.get(config.key));
      return VMap.of({ value: value === undefined ? null : fromJson(value, ctx.meter) });
    }
    case 'put': {
      if (!('value' in config)) throw new RunError('step_config_invalid', 'a :kv :put needs :value');
      const value = (config.value ?? null) as JsonValue;
      const bytes = utf8Length(JSON.stringify(value));
      if (bytes > L.valueBytesMax) {
        throw new RunError(
          'step_config_invalid',
          `the :kv value is ${bytes} bytes; the limit is ${L.valueBytesMax}`,
        );
      }
      await port('write', () => ports.kv.put(config.key, value, config['ttl-s']));
      return VMap.of({ value: fromJson(value, ctx.meter) });
    }
    case 'delete':
      await port('delete', () => ports.kv.delete(config.key));
      return VMap.of({ value: null });
  }
}
