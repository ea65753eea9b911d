import { readEdn } from '@flowgate/flows';
import { describe, expect, it } from 'vitest';
import { type RunOutcome, runBody } from '../interpreter.js';
import { memoryKv, modelOf } from '../testing.js';
import type { KvStore } from './common.js';
import { createStepRunner } from './index.js';

async function kvRun(body: string, kv: KvStore, raw = false): Promise<RunOutcome> {
  let model = modelOf(raw ? '(flow/step :kv :k {:operation :get :key "k"})' : body);
  if (raw) {
    const read = readEdn(body);
    if (!read.ok) throw new Error('unreadable');
    model = { ...model, flow: read.value };
  }
  return runBody(
    model,
    {},
    {
      steps: createStepRunner({ connections: { resolve: () => Promise.reject(new Error('unused')) }, kv }),
    },
  );
}

const json = (outcome: RunOutcome) => {
  if (outcome.status !== 'completed') throw new Error(JSON.stringify(outcome));
  return outcome.result.json;
};

describe(':kv', () => {
  it('gets nil for a missing key, puts with a TTL, reads back with keyword keys, deletes', async () => {
    const kv = memoryKv();
    const outcome = await kvRun(
      `(let [before (flow/step :kv :get1 {:operation :get :key "app/x"})
             put (flow/step :kv :put {:operation :put :key "app/x" :value {:n 1 :tags [:a "b"]} :ttl-s 60})
             after (flow/step :kv :get2 {:operation :get :key "app/x"})
             n (get-in after [:value :n])
             gone (flow/step :kv :del {:operation :delete :key "app/x"})
             again (flow/step :kv :get3 {:operation :get :key "app/x"})]
         [before put after n gone again])`,
      kv,
    );
    expect(json(outcome)).toEqual([
      { value: null },
      { value: { n: 1, tags: ['a', 'b'] } },
      { value: { n: 1, tags: ['a', 'b'] } },
      1,
      { value: null },
      { value: null },
    ]);
    expect(kv.data.size).toBe(0);
  });

  it('stores plain JSON with the TTL given', async () => {
    const kv = memoryKv();
    await kvRun(
      '(flow/step :kv :put {:operation :put :key "k" :value {:when "now" :kind :x} :ttl-s 30})',
      kv,
    );
    expect(kv.data.get('k')).toEqual({ value: { when: 'now', kind: 'x' }, ttl: 30 });
  });

  it('checks key length and value size at run time', async () => {
    const kv = memoryKv();
    expect(
      await kvRun('(flow/step :kv :k {:operation :get :key (clojure.string/join (range 200))})', kv),
    ).toMatchObject({
      status: 'failed',
      error: {
        code: 'step_config_invalid',
        message: ':kv step: :key: Too big: expected string to have <=256 characters',
      },
    });
    expect(
      await kvRun(
        '(flow/step :kv :k {:operation :put :key "k" :value (clojure.string/join (range 20000))})',
        kv,
      ),
    ).toMatchObject({
      status: 'failed',
      error: { code: 'step_config_invalid', message: 'the :kv value is 88892 bytes; the limit is 65536' },
    });
    expect(await kvRun('(flow/step :kv :k {:operation :get :key "k" :value 1})', kv, true)).toMatchObject({
      status: 'failed',
      error: { code: 'step_config_invalid', message: ':value and :ttl-s only apply to :put' },
    });
  });

  it('reports a failing store as kv_failed without its details', async () => {
    const broken: KvStore = {
      get: async () => {
        throw new Error('connection to 10.0.0.5 refused (password=hunter2)');
      },
      put: async () => undefined,
      delete: async () => undefined,
    };
    expect(await kvRun('(flow/step :kv :k {:operation :get :key "k"})', broken)).toMatchObject({
      status: 'failed',
      error: { code: 'kv_failed', message: 'the key-value store could not read the key', stepId: 'k' },
    });
  });
});
