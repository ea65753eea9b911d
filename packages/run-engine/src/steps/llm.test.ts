import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RunError } from '../errors.js';
import { type RunOutcome, runBody } from '../interpreter.js';
import type { RunLimits } from '../limits.js';
import type { StepEvent } from '../ports.js';
import { modelOf } from '../testing.js';
import type { LlmQuota } from './common.js';
import { createStepRunner } from './index.js';

const API_KEY = 'sk-test-0123456789abcdefghij';
const BASE = 'https://llm.example.test/v1';

interface Seen {
  body: Record<string, unknown>;
  authorization: string | null;
}
const seen: Seen[] = [];
let replies: (() => Response)[] = [];

const completion = (content: string, usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }) =>
  HttpResponse.json({
    id: 'c1',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content } }],
    usage,
  });

const mock = setupServer(
  http.post(`${BASE}/chat/completions`, async ({ request }) => {
    seen.push({
      body: (await request.json()) as Record<string, unknown>,
      authorization: request.headers.get('authorization'),
    });
    const next = replies.shift();
    return next ? next() : completion('default reply');
  }),
);

beforeAll(() => mock.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  mock.resetHandlers();
  seen.length = 0;
  replies = [];
});
afterAll(() => mock.close());

async function llm(
  config: string,
  limits: Partial<RunLimits> = {},
  llmQuota?: LlmQuota,
  body = `(flow/step :llm :ask ${config})`,
): Promise<{ outcome: RunOutcome; events: StepEvent[] }> {
  const model = modelOf(body, ':requires [{:slot :llm :type :llm-provider}]');
  const events: StepEvent[] = [];
  const outcome = await runBody(
    model,
    {},
    {
      steps: createStepRunner({
        connections: {
          resolve: async () => ({
            baseUrl: BASE,
            headers: { authorization: `Bearer ${API_KEY}` },
            knownSecrets: [API_KEY],
            defaultModel: 'default-model',
          }),
        },
        kv: { get: async () => undefined, put: async () => undefined, delete: async () => undefined },
        // The mocked host never resolves: the address check is exercised by the :http tests.
        resolve: async () => [{ address: '93.184.216.34', family: 4 }],
        llm: { maxAttempts: 2, backoffMs: 1 },
        ...(llmQuota ? { llmQuota } : {}),
      }),
      onEvent: (e) => {
        events.push(e);
      },
      limits,
    },
  );
  return { outcome, events };
}

describe(':llm against an OpenAI-compatible API (msw)', () => {
  it('sends the prompt with the system message and returns text and usage', async () => {
    replies.push(() => completion('A short summary.'));
    const { outcome, events } = await llm(
      '{:connection :llm :system "Be brief." :prompt "Summarise this." :temperature 0.2 :max-tokens 100}',
    );
    expect(outcome).toMatchObject({
      status: 'completed',
      result: {
        json: {
          text: 'A short summary.',
          json: null,
          usage: { 'prompt-tokens': 12, 'completion-tokens': 5, 'total-tokens': 17 },
        },
      },
      usage: { steps: 1, httpCalls: 1, llmTokens: 17 },
    });
    expect(seen).toEqual([
      {
        authorization: `Bearer ${API_KEY}`,
        body: {
          model: 'default-model',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Summarise this.' },
          ],
          max_tokens: 100,
          temperature: 0.2,
        },
      },
    ]);
    expect(JSON.stringify({ outcome, events })).not.toContain(API_KEY);
  });

  it('asks for a JSON object and parses the reply (also inside a code fence)', async () => {
    replies.push(() => completion('```json\n{"category": "bug", "priority": "urgent"}\n```'));
    const { outcome } = await llm(
      '{:connection :llm :model "gpt-x" :messages [{:role "user" :content "Classify"}] :response-format :json}',
    );
    expect(outcome).toMatchObject({
      status: 'completed',
      result: { json: { json: { category: 'bug', priority: 'urgent' } } },
    });
    expect(seen[0]?.body).toEqual({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'Classify' }],
      response_format: { type: 'json_object' },
    });
  });

  it('fails the step when a JSON reply does not parse', async () => {
    replies.push(() => completion('not json at all'));
    const { outcome } = await llm('{:connection :llm :prompt "x" :response-format :json}');
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'llm_response_invalid', message: 'the model’s reply is not valid JSON', stepId: 'ask' },
      usage: { llmTokens: 17 },
    });
  });

  it('retries a 429 once, then reports the provider’s error without the key', async () => {
    replies.push(() => HttpResponse.json({ error: { message: 'slow down' } }, { status: 429 }));
    replies.push(() => completion('ok'));
    const retried = await llm('{:connection :llm :prompt "x"}');
    expect(retried.outcome).toMatchObject({ status: 'completed', usage: { httpCalls: 2 } });
    expect(retried.events.map((e) => e.type)).toEqual(['step_started', 'step_retrying', 'step_completed']);

    replies.push(() =>
      HttpResponse.json({ error: { message: `Incorrect API key provided: ${API_KEY}` } }, { status: 401 }),
    );
    const { outcome } = await llm('{:connection :llm :prompt "x"}');
    expect(outcome).toEqual({
      status: 'failed',
      error: {
        code: 'llm_request_failed',
        message: 'the LLM provider answered with status 401: Incorrect API key provided: [redacted]',
        stepId: 'ask',
        line: 2,
        column: 8,
      },
      usage: { steps: 1, httpCalls: 1, llmTokens: 0 },
    });
  });

  it('rejects an answer that is not a chat completion', async () => {
    replies.push(() => HttpResponse.json({ nope: true }));
    const { outcome } = await llm('{:connection :llm :prompt "x"}');
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'llm_response_invalid' } });
  });

  it('counts tokens against the run limit and caps max_tokens to what is left', async () => {
    replies.push(() => completion('first', { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 }));
    const over = await llm('{:connection :llm :prompt "x"}', { maxLlmTokens: 50 });
    expect(over.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'llm_token_limit_exceeded',
        message: 'the run used more than its limit of 50 LLM tokens',
      },
      usage: { llmTokens: 70 },
    });
    expect(seen[0]?.body.max_tokens).toBe(50);
  });
});

describe('the workspace LLM token quota', () => {
  /** A quota of `limit` tokens, counted in memory the way the worker counts it in the database. */
  const quota = (limit: number) => {
    const log: string[] = [];
    let used = 0;
    const port: LlmQuota = {
      async check() {
        log.push(`check ${used}`);
        if (used >= limit) throw new RunError('quota_exceeded', `quota of ${limit} used`);
      },
      async add(tokens) {
        log.push(`add ${tokens}`);
        used += tokens;
      },
    };
    return { port, log };
  };

  it("is checked before each :llm step and told each call's tokens; a step past it fails before asking", async () => {
    const q = quota(20);
    const { outcome, events } = await llm(
      '',
      {},
      q.port,
      `[(flow/step :llm :one {:connection :llm :prompt "a"})
        (flow/step :llm :two {:connection :llm :prompt "b"})
        (flow/step :llm :three {:connection :llm :prompt "c"})]`,
    );
    // 17 tokens a call: the second step starts at 17 < 20, the third at 34.
    expect(q.log).toEqual(['check 0', 'add 17', 'check 17', 'add 17', 'check 34']);
    expect(seen).toHaveLength(2);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') throw new Error('expected a failed run');
    expect(outcome.error).toMatchObject({ code: 'quota_exceeded', stepId: 'three' });
    expect(events.find((e) => e.type === 'step_failed')).toMatchObject({
      stepId: 'three',
      error: { code: 'quota_exceeded', message: 'quota of 20 used' },
    });
    expect(outcome.usage.llmTokens).toBe(34);
  });
});
