import { setTimeout as delay } from 'node:timers/promises';
import { deadlineSignal } from '@flowgate/core';
import { STEP_LIMITS } from '@flowgate/flows';
import { z } from 'zod';
import { RunError } from '../errors.js';
import type { StepContext } from '../ports.js';
import { fromJson, type Value, VMap } from '../values.js';
import { connectionFor, parseConfig, type StepPorts } from './common.js';
import { runToolLoop } from './llm-tools.js';
import { type IncomingResponse, NetworkError, send } from './transport.js';

const toolName = z.string().min(1).max(STEP_LIMITS.mcp.toolNameLengthMax);

/** One `:tools` entry; a tool's own `:trusted-metadata` wins over the entry's. */
export const toolsEntrySchema = z.strictObject({
  mcp: z.string(),
  allow: z
    .array(
      z.union([toolName, z.strictObject({ name: toolName, 'trusted-metadata': z.boolean().optional() })]),
    )
    .min(1)
    .max(STEP_LIMITS.mcp.allowMax),
  'trusted-metadata': z.boolean().default(false),
});
export type ToolsEntry = z.infer<typeof toolsEntrySchema>;

export const llmConfigSchema = z.strictObject({
  connection: z.string(),
  model: z.string().min(1).max(200).optional(),
  prompt: z.string().optional(),
  messages: z
    .array(z.strictObject({ role: z.enum(['user', 'assistant', 'system']), content: z.string() }))
    .min(1)
    .optional(),
  system: z.string().optional(),
  'response-format': z.enum(['text', 'json']).default('text'),
  temperature: z.number().min(0).max(2).optional(),
  'max-tokens': z.number().int().min(1).max(STEP_LIMITS.llm.maxTokensMax).optional(),
  tools: z.array(toolsEntrySchema).min(1).max(STEP_LIMITS.llm.toolServersMax).optional(),
  'max-tool-rounds': z
    .number()
    .int()
    .min(1)
    .max(STEP_LIMITS.llm.maxToolRoundsMax)
    .default(STEP_LIMITS.llm.maxToolRoundsDefault),
});

const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().max(200),
                function: z.object({ name: z.string().max(200), arguments: z.string() }),
              }),
            )
            .max(64)
            .nullable()
            .optional(),
        }),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().int().min(0).optional(),
      completion_tokens: z.number().int().min(0).optional(),
      total_tokens: z.number().int().min(0).optional(),
    })
    .optional(),
});

const MAX_ERROR_CHARS = 300;

/** The provider's own error message, if it sent one (redacted with every other detail before it leaves). */
function providerMessage(response: IncomingResponse): string {
  try {
    const body = JSON.parse(response.body.toString('utf8')) as { error?: { message?: unknown } | string };
    const message = typeof body.error === 'string' ? body.error : body.error?.message;
    if (typeof message === 'string') return `: ${message.slice(0, MAX_ERROR_CHARS)}`;
  } catch {
    // not JSON: the status alone says enough
  }
  return '';
}

/** JSON replies are sometimes wrapped in a Markdown code fence even when JSON was asked for. */
function parseReplyJson(text: string): unknown {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  return JSON.parse(fenced ? (fenced[1] as string) : text);
}

/** One chat completion as the loop needs it. */
export interface Completion {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
}

export interface LlmEndpoint {
  url: URL;
  headers: Record<string, string>;
  credentialHeaders: Set<string>;
}

/** POSTs one completion request (retrying network errors, 429 and 5xx) and counts its tokens. */
export async function requestCompletion(
  endpoint: LlmEndpoint,
  payload: Record<string, unknown>,
  ctx: StepContext,
  ports: StepPorts,
): Promise<Completion> {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  let response: IncomingResponse | undefined;
  for (let attempt = 1; ; attempt++) {
    let failure: NetworkError | undefined;
    response = undefined;
    const attemptDeadline = deadlineSignal(ctx.signal, STEP_LIMITS.llm.timeoutMs);
    try {
      response = await send(
        {
          url: endpoint.url,
          method: 'POST',
          headers: endpoint.headers,
          body,
          credentialHeaders: endpoint.credentialHeaders,
          maxResponseBytes: STEP_LIMITS.http.responseBytesMax,
          signal: attemptDeadline.signal,
          beforeSend: () => ctx.usage.countHttpCall(),
        },
        ports.transport,
      );
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      failure = error;
    } finally {
      attemptDeadline.clear();
    }
    if (ctx.signal.aborted) throw new RunError('llm_request_failed', 'the request was stopped');
    const retryable =
      failure !== undefined ||
      (response !== undefined && (response.status >= 500 || response.status === 429));
    if (retryable && attempt < ports.llm.maxAttempts) {
      const delayMs = ports.llm.backoffMs * 2 ** (attempt - 1);
      await ctx.retrying({
        attempt,
        delayMs,
        reason: failure ? failure.message : `status ${response?.status}`,
      });
      await delay(delayMs, undefined, { signal: ctx.signal }).catch(() => undefined);
      if (ctx.signal.aborted) throw new RunError('llm_request_failed', 'the request was stopped');
      continue;
    }
    if (failure) {
      throw new RunError(
        'llm_request_failed',
        failure.timedOut ? `the LLM call timed out after ${STEP_LIMITS.llm.timeoutMs} ms` : failure.message,
      );
    }
    break;
  }
  const res = response as IncomingResponse;
  if (res.status < 200 || res.status >= 300) {
    throw new RunError(
      'llm_request_failed',
      `the LLM provider answered with status ${res.status}${providerMessage(res)}`,
    );
  }
  let completion: z.infer<typeof completionSchema>;
  try {
    completion = completionSchema.parse(JSON.parse(res.body.toString('utf8')));
  } catch {
    throw new RunError('llm_response_invalid', 'the LLM provider’s answer is not a chat completion');
  }
  const message = completion.choices[0]?.message;
  const content = message?.content ?? '';
  ctx.meter.string(content.length);
  const promptTokens = completion.usage?.prompt_tokens ?? 0;
  const completionTokens = completion.usage?.completion_tokens ?? 0;
  const totalTokens = completion.usage?.total_tokens ?? promptTokens + completionTokens;
  // The workspace's count first: the run's own limit may throw, and the tokens were spent either way.
  await ports.llmQuota?.add(totalTokens);
  ctx.usage.addLlmTokens(totalTokens);
  return {
    content,
    toolCalls: (message?.tool_calls ?? []).map((c) => ({
      id: c.id,
      name: c.function.name,
      arguments: c.function.arguments,
    })),
    usage: { promptTokens, completionTokens, totalTokens },
  };
}

export function parseJsonReply(text: string, ctx: StepContext): Value {
  try {
    return fromJson(parseReplyJson(text), ctx.meter);
  } catch (error) {
    if (error instanceof RunError && error.code !== 'type_error') throw error;
    throw new RunError('llm_response_invalid', 'the model’s reply is not valid JSON');
  }
}

export function usageValue(usage: Completion['usage']): VMap {
  return VMap.of({
    'prompt-tokens': usage.promptTokens,
    'completion-tokens': usage.completionTokens,
    'total-tokens': usage.totalTokens,
  });
}

/** Runs an :llm step against an OpenAI-compatible `/chat/completions` endpoint. */
export async function runLlmStep(rawConfig: unknown, ctx: StepContext, ports: StepPorts): Promise<Value> {
  const config = parseConfig(llmConfigSchema, rawConfig, ':llm');
  if ((config.prompt === undefined) === (config.messages === undefined)) {
    throw new RunError('step_config_invalid', 'an :llm step needs exactly one of :prompt or :messages');
  }
  // Refused before anything is resolved or sent when the workspace's month of tokens is used up.
  await ports.llmQuota?.check();
  const connection = await connectionFor(ports, config.connection, 'llm', ctx);
  const model = config.model ?? connection.defaultModel;
  if (!model)
    throw new RunError(
      'step_config_invalid',
      'an :llm step needs :model when its connection has no default model',
    );
  const left = ctx.usage.llmTokensLeft();
  if (left <= 0) throw new RunError('llm_token_limit_exceeded', 'the run has no LLM tokens left');

  const messages = [
    ...(config.system !== undefined ? [{ role: 'system', content: config.system }] : []),
    ...(config.messages ?? [{ role: 'user', content: config.prompt as string }]),
  ];
  let url: URL;
  try {
    url = new URL(`${connection.baseUrl.replace(/\/+$/, '')}/chat/completions`);
  } catch {
    throw new RunError('step_config_invalid', 'the LLM connection base URL is not a valid URL');
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  for (const [name, value] of Object.entries(connection.headers)) headers[name.toLowerCase()] = value;
  const endpoint: LlmEndpoint = {
    url,
    headers,
    credentialHeaders: new Set([
      'authorization',
      ...Object.keys(connection.headers).map((h) => h.toLowerCase()),
    ]),
  };
  const payloadFor = (tokensLeft: number): Record<string, unknown> => {
    const maxTokens = Math.min(config['max-tokens'] ?? STEP_LIMITS.llm.maxTokensMax, tokensLeft);
    const payload: Record<string, unknown> = { model, messages };
    if (config['max-tokens'] !== undefined || maxTokens < STEP_LIMITS.llm.maxTokensMax)
      payload.max_tokens = maxTokens;
    if (config.temperature !== undefined) payload.temperature = config.temperature;
    if (config['response-format'] === 'json') payload.response_format = { type: 'json_object' };
    return payload;
  };
  if (config.tools) {
    return runToolLoop(
      {
        tools: config.tools,
        maxRounds: config['max-tool-rounds'],
        json: config['response-format'] === 'json',
      },
      endpoint,
      messages,
      payloadFor,
      ctx,
      ports,
    );
  }

  const completion = await requestCompletion(endpoint, payloadFor(left), ctx, ports);
  const text = completion.content;
  return VMap.of({
    text,
    json: config['response-format'] === 'json' ? parseJsonReply(text, ctx) : null,
    usage: usageValue(completion.usage),
  });
}
