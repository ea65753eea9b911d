import { type FlowModel, readEdn } from '@flowgate/flows';
import { describe, expect, it } from 'vitest';
import { RunError } from './errors.js';
import { type RunBodyOptions, type RunOutcome, runBody } from './interpreter.js';
import type { JournalEntry, StepEvent, StepRequest, StepRunner } from './ports.js';
import { createStepRunner } from './steps/index.js';
import { modelOf } from './testing.js';
import { fromJson, type JsonValue } from './values.js';

/** A fake StepRunner: answers each request with `answer(request)` as plain JSON and records the calls. */
function fakeRunner(
  answer: (req: StepRequest) => JsonValue | Promise<JsonValue> = (req) => ({ echo: req.config }),
) {
  const calls: StepRequest[] = [];
  const runner: StepRunner = async (req, ctx) => {
    calls.push(req);
    return { kind: 'result', value: fromJson(await answer(req), ctx.meter) };
  };
  return { runner, calls, ids: () => calls.map((c) => c.stepId) };
}

/** Runs a body, collecting the journal and events. */
async function run(
  model: FlowModel,
  input: unknown,
  options: Partial<RunBodyOptions> & { steps: StepRunner },
): Promise<{ outcome: RunOutcome; journal: Map<string, JournalEntry>; events: StepEvent[] }> {
  const journal = new Map<string, JournalEntry>(options.journal ?? []);
  const events: StepEvent[] = [];
  const outcome = await runBody(model, input, {
    record: (id, entry) => {
      journal.set(id, entry);
    },
    onEvent: (e) => {
      events.push(e);
    },
    ...options,
    journal: new Map(journal),
  });
  return { outcome, journal, events };
}

function resultJson(outcome: RunOutcome): unknown {
  if (outcome.status !== 'completed') throw new Error(`not completed: ${JSON.stringify(outcome)}`);
  return outcome.result.json;
}

const THREE_STEPS = modelOf(
  `(let [input (flow/input)
         a (flow/step :http :one {:url "https://api.example.com/one" :query {:q (:q input)}})
         b (flow/step :http :two {:url "https://api.example.com/two" :json {:from-one (:body a)}})
         c (flow/step :kv :three {:operation :put :key "k" :value (:body b)})]
     {:a (:body a) :b (:body b) :c c})`,
);

const answerBody = (req: StepRequest): JsonValue => ({
  status: 200,
  body: { step: req.stepId, n: req.stepId.length },
});

describe('replay', () => {
  it('resumes after a crash on the second step without running the first again, with the same result', async () => {
    const clean = fakeRunner(answerBody);
    const expected = await run(THREE_STEPS, { q: 'x' }, { steps: clean.runner });
    expect(clean.ids()).toEqual(['one', 'two', 'three']);

    let crash = true;
    const flaky = fakeRunner((req) => {
      if (req.stepId === 'two' && crash) throw new Error('worker process died');
      return answerBody(req);
    });
    const first = await run(THREE_STEPS, { q: 'x' }, { steps: flaky.runner });
    expect(first.outcome).toEqual({
      status: 'failed',
      error: {
        code: 'step_failed',
        message: 'step two failed unexpectedly',
        stepId: 'two',
        line: 4,
        column: 12,
      },
      usage: { steps: 2, httpCalls: 0, llmTokens: 0 },
    });
    expect([...first.journal.keys()]).toEqual(['one']);

    crash = false;
    const second = await run(
      THREE_STEPS,
      { q: 'x' },
      { steps: flaky.runner, journal: first.journal, usage: first.outcome.usage },
    );
    expect(flaky.ids()).toEqual(['one', 'two', 'two', 'three']);
    expect(resultJson(second.outcome)).toEqual(resultJson(expected.outcome));
    expect(second.outcome.usage).toEqual({ steps: 4, httpCalls: 0, llmTokens: 0 });
    expect(second.events.filter((e) => e.type === 'step_started').map((e) => e.stepId)).toEqual([
      'two',
      'three',
    ]);
    expect([...second.journal.keys()]).toEqual(['one', 'two', 'three']);
  });

  it('returns stored results exactly (keywords, sets, lists survive) and never calls the runner for them', async () => {
    const model = modelOf(
      '(flow/step :function :shape {:code (fn [x] {:kind :html :tags #{:a} :xs (rest [0 x])}) :input 1})',
    );
    const first = await run(model, {}, { steps: fakeRunner().runner });
    const entry = first.journal.get('shape');
    expect(entry).toEqual({
      status: 'completed',
      type: 'function',
      result: { '~:kind': '~:html', '~:tags': { '~#set': ['~:a'] }, '~:xs': { '~#list': [1] } },
    });
    const replayed = await run(model, {}, { steps: fakeRunner().runner, journal: first.journal });
    expect(replayed.events).toEqual([]);
    expect(resultJson(replayed.outcome)).toEqual({ kind: 'html', tags: ['a'], xs: [1] });
  });

  it('a stored result wins over what the step would produce now', async () => {
    const model = modelOf('(flow/step :http :get {:url "https://api.example.com/"})');
    const journal = new Map<string, JournalEntry>([
      ['get', { status: 'completed', type: 'http', result: { '~:status': 299 } }],
    ]);
    const fake = fakeRunner();
    const { outcome } = await run(model, {}, { steps: fake.runner, journal });
    expect(resultJson(outcome)).toEqual({ status: 299 });
    expect(fake.calls).toEqual([]);
  });

  it('refuses a journal whose step type differs from the body', async () => {
    const model = modelOf('(flow/step :http :get {:url "https://api.example.com/"})');
    const journal = new Map<string, JournalEntry>([
      ['get', { status: 'completed', type: 'kv', result: null }],
    ]);
    const { outcome } = await run(model, {}, { steps: fakeRunner().runner, journal });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'replay_mismatch',
        message: 'the journal has step get as :kv, the body as :http',
        stepId: 'get',
      },
    });
  });

  it('a failing record port rejects runBody instead of failing the run', async () => {
    const boom = new Error('database unavailable');
    await expect(
      runBody(
        THREE_STEPS,
        {},
        {
          steps: fakeRunner(answerBody).runner,
          record: () => {
            throw boom;
          },
        },
      ),
    ).rejects.toBe(boom);
    await expect(
      runBody(
        THREE_STEPS,
        {},
        {
          steps: fakeRunner(answerBody).runner,
          onEvent: async () => {
            throw boom;
          },
        },
      ),
    ).rejects.toBe(boom);
  });
});

describe('step ids inside for', () => {
  it('get the position of the bound element, also when :when skips some', async () => {
    const model = modelOf(
      `(for [item (:items (flow/input)) :when (not= item "skip")]
         (flow/step :http :notify {:url "https://api.example.com/n" :json {:item item}}))`,
    );
    const fake = fakeRunner((req) => req.config.json ?? null);
    const { outcome } = await run(model, { items: ['a', 'skip', 'c'] }, { steps: fake.runner });
    expect(fake.ids()).toEqual(['notify[0]', 'notify[2]']);
    expect(resultJson(outcome)).toEqual([{ item: 'a' }, { item: 'c' }]);
  });

  it('nest, one index per binding, and steps in :when and inner collections are indexed too', async () => {
    const model = modelOf(
      `(for [a [1 2]
             :when (:ok (flow/step :http :check {:url "https://api.example.com/c" :json {:a a}}))
             b (:bs (flow/step :http :list {:url "https://api.example.com/l"}))]
         (flow/step :http :pair {:url "https://api.example.com/p" :json [a b]}))`,
    );
    const fake = fakeRunner((req) =>
      req.stepId.startsWith('check')
        ? { ok: true }
        : req.stepId.startsWith('list')
          ? { bs: ['x', 'y'] }
          : (req.config.json ?? null),
    );
    const { outcome } = await run(model, {}, { steps: fake.runner });
    expect(fake.ids()).toEqual([
      'check[0]',
      'list[0]',
      'pair[0][0]',
      'pair[0][1]',
      'check[1]',
      'list[1]',
      'pair[1][0]',
      'pair[1][1]',
    ]);
    expect(resultJson(outcome)).toEqual([
      [1, 'x'],
      [1, 'y'],
      [2, 'x'],
      [2, 'y'],
    ]);
  });

  it('replays part of a loop and runs the rest', async () => {
    const model = modelOf('(for [x [1 2 3]] (flow/step :http :s {:url "https://api.example.com/" :json x}))');
    const journal = new Map<string, JournalEntry>([
      ['s[0]', { status: 'completed', type: 'http', result: 10 }],
      ['s[1]', { status: 'completed', type: 'http', result: 20 }],
    ]);
    const fake = fakeRunner(() => 30);
    const { outcome } = await run(model, {}, { steps: fake.runner, journal });
    expect(fake.ids()).toEqual(['s[2]']);
    expect(resultJson(outcome)).toEqual([10, 20, 30]);
  });

  it('a step reached twice in one run is refused (possible only in trees the validator would reject)', async () => {
    const model = modelOf('(flow/step :sleep :s {:duration-ms 1})');
    const read = readEdn(
      '(do (flow/step :kv :s {:operation :get :key "a"}) (flow/step :kv :s {:operation :get :key "b"}))',
    );
    if (!read.ok) throw new Error('unreadable');
    const { outcome } = await run({ ...model, flow: read.value }, {}, { steps: fakeRunner().runner });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'duplicate_step_execution', stepId: 's', line: 1, column: 51 },
    });
  });
});

describe('durable sleep', () => {
  const model = modelOf(
    `(let [a (flow/step :kv :before {:operation :get :key "k"})
           _ (flow/step :sleep :wait {:duration-ms 60000})
           b (flow/step :kv :after {:operation :get :key "k"})]
       [(:value a) (:value b)])`,
  );
  const kvValues: JsonValue[] = ['first', 'second'];
  const steps = () => {
    let reads = 0;
    const runner = createStepRunner({
      connections: { resolve: async () => Promise.reject(new Error('unused')) },
      kv: {
        get: async () => kvValues[reads++] ?? null,
        put: async () => undefined,
        delete: async () => undefined,
      },
    });
    return { runner, reads: () => reads };
  };

  it('treats a zero sleep as no pause: the run continues without waiting', async () => {
    const zero = modelOf(
      `(let [_ (flow/step :sleep :nap {:duration-ms (* 3600000 (:hours (flow/input)))})] :done)`,
    );
    const result = await run(zero, { hours: 0 }, { steps: steps().runner, now: () => 1_000 });
    expect(result.outcome).toMatchObject({ status: 'completed' });
    expect(result.journal.get('nap')).toEqual({ status: 'completed', type: 'sleep', result: null });
  });

  it('suspends at the sleep, stays waiting before the wake time, and continues past it afterwards', async () => {
    let now = 1_000_000;
    const clock = () => now;
    const s = steps();
    const first = await run(model, {}, { steps: s.runner, now: clock });
    expect(first.outcome).toEqual({
      status: 'waiting',
      wakeAt: 1_060_000,
      stepId: 'wait',
      usage: { steps: 2, httpCalls: 0, llmTokens: 0 },
    });
    expect(first.journal.get('wait')).toEqual({ status: 'waiting', type: 'sleep', wakeAt: 1_060_000 });
    expect(first.events.map((e) => `${e.type}:${e.stepId}`)).toEqual([
      'step_started:before',
      'step_completed:before',
      'step_started:wait',
      'step_waiting:wait',
    ]);
    expect(first.events[3]?.detail).toEqual({ wakeAt: new Date(1_060_000).toISOString() });

    // Woken early (a stray notification, a lease takeover): still waiting for the same time, nothing re-run.
    now = 1_030_000;
    const early = await run(
      model,
      {},
      { steps: s.runner, now: clock, journal: first.journal, usage: first.outcome.usage },
    );
    expect(early.outcome).toMatchObject({ status: 'waiting', wakeAt: 1_060_000, usage: { steps: 2 } });
    expect(early.events).toEqual([]);
    expect(s.reads()).toBe(1);

    now = 1_060_000;
    const resumed = await run(
      model,
      {},
      { steps: s.runner, now: clock, journal: first.journal, usage: first.outcome.usage },
    );
    expect(resultJson(resumed.outcome)).toEqual(['first', 'second']);
    expect(resumed.journal.get('wait')).toEqual({ status: 'completed', type: 'sleep', result: null });
    expect(resumed.events.map((e) => `${e.type}:${e.stepId}`)).toEqual([
      'step_completed:wait',
      'step_started:after',
      'step_completed:after',
    ]);
    expect(s.reads()).toBe(2);
    expect(resumed.outcome.usage).toEqual({ steps: 3, httpCalls: 0, llmTokens: 0 });
  });
});

describe('function steps', () => {
  it('run in the interpreter, see only their input, and are recorded like any step', async () => {
    const model = modelOf(
      `(let [secret-ish 41
             r (flow/step :function :add {:code (fn [x] (+ (:n x) 1)) :input {:n secret-ish}})
             s (flow/step :function :named {:ref :double :input r})
             t (flow/step :function :none {:code (fn [] :constant)})]
         [r s t])`,
      ':functions [{:id :double :code (fn [n] (* 2 n))}]',
    );
    const fake = fakeRunner();
    const { outcome, journal, events } = await run(model, {}, { steps: fake.runner });
    expect(resultJson(outcome)).toEqual([42, 84, 'constant']);
    expect(fake.calls).toEqual([]);
    expect([...journal.keys()]).toEqual(['add', 'named', 'none']);
    expect(events.filter((e) => e.type === 'step_started').map((e) => e.detail)).toEqual([
      { config: { code: '(fn …)', input: { n: 41 } } },
      { config: { ref: 'double', input: 42 } },
      { config: { code: '(fn …)' } },
    ]);
  });

  it('cannot reach body bindings or flow/input even in a hand-made tree', async () => {
    const model = modelOf('(flow/step :function :f {:code (fn [x] x) :input 1})');
    for (const [code, expected] of [
      ['(fn [x] secret)', 'unknown symbol secret'],
      ['(fn [x] (flow/input))', 'flow/input is not available inside function code'],
      ['(fn [x] (flow/step :sleep :s {:duration-ms 1}))', 'flow/step is not available inside function code'],
    ] as const) {
      const read = readEdn(`(let [secret 1] (flow/step :function :f {:code ${code} :input 1}))`);
      if (!read.ok) throw new Error('unreadable');
      const { outcome } = await run({ ...model, flow: read.value }, {}, { steps: fakeRunner().runner });
      expect(outcome).toMatchObject({ status: 'failed', error: { message: expected, stepId: 'f' } });
    }
  });

  it('fail with the position inside the function', async () => {
    const model = modelOf('(flow/step :function :f {:code (fn [x] (inc x)) :input "a"})');
    const { outcome, events } = await run(model, {}, { steps: fakeRunner().runner });
    expect(outcome).toEqual({
      status: 'failed',
      error: {
        code: 'type_error',
        message: 'inc expects a number, got a string',
        line: 2,
        column: 47,
        stepId: 'f',
      },
      usage: { steps: 1, httpCalls: 0, llmTokens: 0 },
    });
    expect(events.map((e) => e.type)).toEqual(['step_started', 'step_failed']);
    expect(events[1]?.error).toEqual({
      code: 'type_error',
      message: 'inc expects a number, got a string',
      line: 2,
      column: 47,
      stepId: 'f',
    });
  });
});

describe('run limits', () => {
  it('step executions', async () => {
    const { outcome } = await run(
      THREE_STEPS,
      {},
      { steps: fakeRunner(answerBody).runner, limits: { maxSteps: 2 } },
    );
    expect(outcome).toEqual({
      status: 'failed',
      error: {
        code: 'step_limit_exceeded',
        message: 'the run reached its limit of 2 step executions',
        stepId: 'three',
        line: 5,
        column: 12,
      },
      usage: { steps: 2, httpCalls: 0, llmTokens: 0 },
    });
  });

  it('count from the usage of earlier attempts', async () => {
    const { outcome } = await run(
      THREE_STEPS,
      {},
      {
        steps: fakeRunner(answerBody).runner,
        limits: { maxSteps: 3 },
        usage: { steps: 2, httpCalls: 0, llmTokens: 0 },
      },
    );
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'step_limit_exceeded', stepId: 'two' },
    });
  });

  it('HTTP calls and LLM tokens through the usage meter', async () => {
    const model = modelOf('(flow/step :http :h {:url "https://api.example.com/"})');
    const calling: StepRunner = async (_req, ctx) => {
      ctx.usage.countHttpCall();
      ctx.usage.countHttpCall();
      return { kind: 'result', value: null };
    };
    const http = await run(model, {}, { steps: calling, limits: { maxHttpCalls: 1 } });
    expect(http.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'http_call_limit_exceeded',
        message: 'the run reached its limit of 1 HTTP calls',
        stepId: 'h',
      },
      usage: { httpCalls: 1 },
    });
    const tokens: StepRunner = async (_req, ctx) => {
      ctx.usage.addLlmTokens(150);
      return { kind: 'result', value: ctx.usage.llmTokensLeft() };
    };
    const ok = await run(model, {}, { steps: tokens, limits: { maxLlmTokens: 200 } });
    expect(resultJson(ok.outcome)).toBe(50);
    expect(ok.outcome.usage.llmTokens).toBe(150);
    const over = await run(
      model,
      {},
      { steps: tokens, limits: { maxLlmTokens: 200 }, usage: { steps: 0, httpCalls: 0, llmTokens: 100 } },
    );
    expect(over.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'llm_token_limit_exceeded' },
      usage: { llmTokens: 250 },
    });
  });

  it('result sizes: of a step and of the run', async () => {
    const model = modelOf('(flow/step :http :big {:url "https://api.example.com/"})');
    const big = fakeRunner(() => 'x'.repeat(1000));
    const step = await run(model, {}, { steps: big.runner, limits: { maxStepResultBytes: 500 } });
    expect(step.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'result_too_large',
        message: 'the result of step big is larger than 500 bytes',
        stepId: 'big',
      },
    });
    const result = await run(
      modelOf('(str (range 400))'),
      {},
      {
        steps: big.runner,
        limits: { maxResultBytes: 1000 },
      },
    );
    expect(result.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'result_too_large', message: 'the run result is larger than 1000 bytes' },
    });
  });

  it('input: a JSON object within its size', async () => {
    const model = modelOf('(flow/input)');
    for (const input of [[1], 'text', 5]) {
      const { outcome } = await run(model, input, { steps: fakeRunner().runner });
      expect(outcome).toMatchObject({
        status: 'failed',
        error: { code: 'input_invalid', message: 'the run input must be a JSON object' },
      });
    }
    const large = await run(
      model,
      { s: 'x'.repeat(200) },
      { steps: fakeRunner().runner, limits: { maxInputBytes: 100 } },
    );
    expect(large.outcome).toMatchObject({
      error: { code: 'input_invalid', message: 'the run input is larger than 100 bytes' },
    });
    expect(resultJson((await run(model, undefined, { steps: fakeRunner().runner })).outcome)).toEqual({});
  });

  it('cancellation and the deadline stop a step in flight', async () => {
    const model = modelOf('(flow/step :http :slow {:url "https://api.example.com/"})');
    const hanging: StepRunner = (_req, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () =>
          reject(new RunError('http_request_failed', 'the request was stopped')),
        );
      });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const cancelled = await run(model, {}, { steps: hanging, signal: controller.signal });
    expect(cancelled.outcome).toMatchObject({
      status: 'cancelled',
      error: { code: 'run_cancelled', message: 'the run was cancelled', stepId: 'slow' },
    });
    expect(cancelled.events.map((e) => e.type)).toEqual(['step_started', 'step_failed']);
    const started = Date.now();
    const timedOut = await run(model, {}, { steps: hanging, limits: { wallTimeMs: 50 } });
    expect(timedOut.outcome).toMatchObject({
      status: 'timed-out',
      error: { code: 'run_timed_out', stepId: 'slow' },
    });
    expect(Date.now() - started).toBeLessThan(2000);
    const pastDeadline = await run(model, {}, { steps: hanging, deadline: Date.now() - 1 });
    expect(pastDeadline.outcome).toMatchObject({ status: 'timed-out', error: { code: 'run_timed_out' } });
    expect(pastDeadline.events).toEqual([]);
  });
});

describe('redaction and events', () => {
  it('removes known secrets and secret-looking values from events, errors and the result', async () => {
    const model = modelOf(
      `(let [r (flow/step :http :call {:url "https://api.example.com/" :headers {"x-note" (:note (flow/input))} :json {:password "hunter22" :user "ann"}})]
         {:echo (:note (flow/input)) :token "abc" :status (:status r)})`,
    );
    const secret = 'sk-live-0123456789abcdef';
    const runner: StepRunner = async (_req, ctx) => {
      ctx.addKnownSecrets(['conn-secret-value']);
      return { kind: 'result', value: fromJson({ status: 200, leaked: 'conn-secret-value' }, ctx.meter) };
    };
    const { outcome, events, journal } = await run(
      model,
      { note: `key ${secret}` },
      { steps: runner, knownSecrets: [secret] },
    );
    const everything = JSON.stringify({ outcome, events });
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('hunter22');
    expect(everything).not.toContain('conn-secret-value');
    expect(resultJson(outcome)).toEqual({ echo: 'key [redacted]', token: '[redacted]', status: 200 });
    expect(events[0]?.detail).toEqual({
      config: {
        url: 'https://api.example.com/',
        headers: { 'x-note': 'key [redacted]' },
        json: { password: '[redacted]', user: 'ann' },
      },
    });
    expect(events[1]?.detail).toMatchObject({ result: { status: 200, leaked: '[redacted]' } });
    // The journal keeps exact data for replay, except known secrets: a credential an API echoes is never stored.
    expect(journal.get('call')).toEqual({
      status: 'completed',
      type: 'http',
      result: { '~:status': 200, '~:leaked': '[redacted]' },
    });
  });

  it('bounds large event details to a preview', async () => {
    const model = modelOf('(flow/step :http :big {:url "https://api.example.com/"})');
    const { events } = await run(model, {}, { steps: fakeRunner(() => 'y'.repeat(10_000)).runner });
    const detail = events[1]?.detail as { truncated: boolean; chars: number; preview: string };
    expect(detail.truncated).toBe(true);
    expect(detail.chars).toBeGreaterThan(10_000);
    expect(detail.preview.length).toBe(4096);
  });

  it('reports retries from executors as step_retrying events', async () => {
    const model = modelOf('(flow/step :http :r {:url "https://api.example.com/"})');
    const runner: StepRunner = async (_req, ctx) => {
      await ctx.retrying({ attempt: 1, delayMs: 10, reason: 'status 503' });
      return { kind: 'result', value: 'ok' };
    };
    const { events } = await run(model, {}, { steps: runner });
    expect(events.map((e) => [e.type, e.stepId, e.stepType])).toEqual([
      ['step_started', 'r', 'http'],
      ['step_retrying', 'r', 'http'],
      ['step_completed', 'r', 'http'],
    ]);
    expect(events[1]?.detail).toEqual({ attempt: 1, delayMs: 10, reason: 'status 503' });
  });

  it('keeps a RunError from an executor with its code and adds the step position', async () => {
    const model = modelOf('(do\n  (flow/step :http :x {:url "https://api.example.com/"}))');
    const runner: StepRunner = async () => {
      throw new RunError('http_timeout', 'the request timed out after 10 ms (1 attempt)');
    };
    const { outcome } = await run(model, {}, { steps: runner });
    expect(outcome).toEqual({
      status: 'failed',
      error: {
        code: 'http_timeout',
        message: 'the request timed out after 10 ms (1 attempt)',
        stepId: 'x',
        line: 3,
        column: 3,
      },
      usage: { steps: 1, httpCalls: 0, llmTokens: 0 },
    });
  });
});

describe('results', () => {
  it('unwrap a viewer envelope to its MIME type', async () => {
    const model = modelOf(
      '{:flowgate.viewer/kind :html :flowgate.viewer/value (str "<h1>" (:title (flow/input)) "</h1>")}',
    );
    const { outcome } = await run(model, { title: 'Hi' }, { steps: fakeRunner().runner });
    expect(outcome).toEqual({
      status: 'completed',
      result: {
        mimeType: 'text/html',
        text: '<h1>Hi</h1>',
        bytes: 11,
        preview: '<h1>Hi</h1>',
        previewTruncated: false,
      },
      usage: { steps: 0, httpCalls: 0, llmTokens: 0 },
    });
  });
});
