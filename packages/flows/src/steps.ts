/**
 * The five step types, documented as data. One definition serves three readers: the validator
 * (config keys, required fields, literal values), `get_step_reference` (JSON for agents) and the run engine
 * (the limits it enforces). Everything here is plain JSON-compatible data.
 */
export const STEP_TYPES = ['http', 'function', 'llm', 'sleep', 'kv'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export function isStepType(value: string): value is StepType {
  return (STEP_TYPES as readonly string[]).includes(value);
}

/** Limits the run engine enforces per step; the validator checks literal config values against the same numbers. */
export const STEP_LIMITS = {
  http: {
    timeoutMsDefault: 10_000,
    timeoutMsMax: 60_000,
    maxAttemptsMax: 5,
    backoffMsMax: 60_000,
    responseBytesMax: 1_048_576,
  },
  llm: {
    maxTokensMax: 32_000,
    timeoutMs: 120_000,
  },
  sleep: {
    durationMsMax: 7 * 24 * 60 * 60 * 1000,
  },
  kv: {
    keyLengthMax: 256,
    valueBytesMax: 65_536,
    ttlSecondsMax: 30 * 24 * 60 * 60,
  },
} as const;

/**
 * How the validator checks a config value. Values that are expressions (a list or a symbol) are evaluated at run
 * time, so only literal values are checked — except where `literal` is required (slots, refs, code, some enums),
 * because the validator and readiness checks must know them before the run.
 */
export type FieldCheck =
  | { kind: 'slot' }
  | { kind: 'function-ref' }
  | { kind: 'fn'; maxParams: number }
  | { kind: 'enum'; values: readonly string[]; literal: boolean }
  | { kind: 'string'; pattern?: string; patternHint?: string; maxLength?: number }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'number'; min: number; max: number }
  | { kind: 'map'; fields?: readonly StepField[] }
  | { kind: 'vector' }
  | { kind: 'any' };

export interface StepField {
  name: string;
  /** Human-readable type, e.g. "keyword (a :requires slot)". */
  type: string;
  required: boolean;
  description: string;
  default?: string;
  check: FieldCheck;
}

export type StepRule =
  | { kind: 'exactly-one'; fields: readonly string[] }
  | { kind: 'at-most-one'; fields: readonly string[] }
  | { kind: 'required-when'; field: string; when: { field: string; values: readonly string[] } }
  | { kind: 'only-when'; field: string; when: { field: string; values: readonly string[] } };

export interface StepExample {
  title: string;
  /** A complete flow definition that validates on its own. */
  flow: string;
}

export interface StepLimit {
  name: string;
  value: number | string;
  description: string;
}

export interface StepReference {
  type: StepType;
  title: string;
  summary: string;
  usage: string;
  fields: readonly StepField[];
  rules: readonly StepRule[];
  result: string;
  notes: readonly string[];
  examples: readonly StepExample[];
  limits: readonly StepLimit[];
}

const L = STEP_LIMITS;

const HTTP: StepReference = {
  type: 'http',
  title: 'HTTP request',
  summary: 'Calls an HTTP API through a bound connection (base URL and auth) or an absolute URL.',
  usage: '(flow/step :http :step-id {:connection :slot :method :get :path "/…"})',
  fields: [
    {
      name: 'connection',
      type: 'keyword (a :requires slot)',
      required: false,
      description: 'Slot whose bound connection supplies the base URL and credentials. Use this or :url.',
      check: { kind: 'slot' },
    },
    {
      name: 'url',
      type: 'string (absolute http/https URL)',
      required: false,
      description: 'Absolute URL for public endpoints that need no credentials. Use this or :connection.',
      check: {
        kind: 'string',
        pattern: '^https?://[^\\s]+$',
        patternHint: 'an absolute http:// or https:// URL',
        maxLength: 2048,
      },
    },
    {
      name: 'method',
      type: 'keyword',
      required: false,
      default: ':get',
      description: 'HTTP method.',
      check: {
        kind: 'enum',
        values: ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'],
        literal: false,
      },
    },
    {
      name: 'path',
      type: 'string',
      required: false,
      description: 'Path appended to the connection base URL (or to :url); starts with "/".',
      check: { kind: 'string', pattern: '^/', patternHint: 'a path starting with "/"', maxLength: 2048 },
    },
    {
      name: 'query',
      type: 'map',
      required: false,
      description: 'Query parameters; values are sent as strings.',
      check: { kind: 'map' },
    },
    {
      name: 'headers',
      type: 'map of string → string',
      required: false,
      description: 'Extra request headers.',
      check: { kind: 'map' },
    },
    {
      name: 'json',
      type: 'any',
      required: false,
      description: 'Request body sent as JSON (sets Content-Type). Use this or :body.',
      check: { kind: 'any' },
    },
    {
      name: 'body',
      type: 'string',
      required: false,
      description: 'Raw request body. Use this or :json.',
      check: { kind: 'string' },
    },
    {
      name: 'response-as',
      type: 'keyword',
      required: false,
      default: ':auto',
      description: 'How to read the response body: :json, :text, or :auto (JSON when the response says so).',
      check: { kind: 'enum', values: ['auto', 'json', 'text'], literal: true },
    },
    {
      name: 'timeout-ms',
      type: 'integer',
      required: false,
      default: String(L.http.timeoutMsDefault),
      description: 'Per-attempt timeout in milliseconds.',
      check: { kind: 'integer', min: 1, max: L.http.timeoutMsMax },
    },
    {
      name: 'retry',
      type: 'map {:max-attempts int :backoff-ms int}',
      required: false,
      description:
        'Retries on network errors, 429 and 5xx responses, with exponential backoff starting at :backoff-ms.',
      check: {
        kind: 'map',
        fields: [
          {
            name: 'max-attempts',
            type: 'integer',
            required: false,
            default: '1',
            description: 'Total attempts including the first.',
            check: { kind: 'integer', min: 1, max: L.http.maxAttemptsMax },
          },
          {
            name: 'backoff-ms',
            type: 'integer',
            required: false,
            default: '500',
            description: 'Delay before the first retry; doubles on each retry.',
            check: { kind: 'integer', min: 0, max: L.http.backoffMsMax },
          },
        ],
      },
    },
  ],
  rules: [
    { kind: 'exactly-one', fields: ['connection', 'url'] },
    { kind: 'at-most-one', fields: ['json', 'body'] },
  ],
  result: '{:status int :headers {…} :body …} — :body is parsed JSON or text depending on :response-as.',
  notes: [
    'Loopback, private, link-local and cloud metadata addresses are refused unless the deployment allows them.',
    'Credentials come from the bound connection and never appear in events, step data or results.',
    'A non-2xx status is a result, not a failure: branch on (:status resp). Network errors and timeouts fail the step after retries.',
  ],
  examples: [
    {
      title: 'GET through a connection with query parameters and retries',
      flow: `{:slug :http-get-example
 :requires [{:slot :crm :type :http-api :label "CRM API"}]
 :invocations {:default {:inputs [{:name :domain :type :string :required true}]}}
 :flow (let [input (flow/input)]
         (flow/step :http :lookup {:connection :crm
                                   :method :get
                                   :path "/companies"
                                   :query {:domain (:domain input)}
                                   :retry {:max-attempts 3 :backoff-ms 500}}))}`,
    },
    {
      title: 'POST JSON to a public URL',
      flow: `{:slug :http-post-example
 :invocations {:default {:inputs [{:name :text :type :text :required true}]}}
 :flow (flow/step :http :post {:url "https://httpbin.org/post"
                               :method :post
                               :json {:text (:text (flow/input))}
                               :response-as :json
                               :timeout-ms 5000})}`,
    },
  ],
  limits: [
    {
      name: 'timeout-ms',
      value: L.http.timeoutMsMax,
      description: 'Maximum per-attempt timeout (default 10000).',
    },
    { name: 'retry.max-attempts', value: L.http.maxAttemptsMax, description: 'Maximum attempts per step.' },
    { name: 'retry.backoff-ms', value: L.http.backoffMsMax, description: 'Maximum initial backoff.' },
    {
      name: 'response-bytes',
      value: L.http.responseBytesMax,
      description: 'Larger responses fail the step.',
    },
  ],
};

const FUNCTION: StepReference = {
  type: 'function',
  title: 'Function',
  summary:
    'Runs a pure function over data: shaping, filtering and mapping belong here, not in the flow body.',
  usage: '(flow/step :function :step-id {:code (fn [x] …) :input value})',
  fields: [
    {
      name: 'code',
      type: 'fn form (fn [x] …)',
      required: false,
      description:
        'Inline function of at most one parameter, which receives :input. It sees only its parameter. Use this or :ref.',
      check: { kind: 'fn', maxParams: 1 },
    },
    {
      name: 'ref',
      type: 'keyword (a :functions id)',
      required: false,
      description: 'A function declared in the top-level :functions vector. Use this or :code.',
      check: { kind: 'function-ref' },
    },
    {
      name: 'input',
      type: 'any',
      required: false,
      default: 'nil',
      description: 'The value passed to the function.',
      check: { kind: 'any' },
    },
  ],
  rules: [{ kind: 'exactly-one', fields: ['code', 'ref'] }],
  result: 'The function’s return value.',
  notes: [
    'Functions have no I/O: flow/step and flow/input are not available inside them.',
    'map, filter, reduce, remove, sort-by and group-by are meant for function code; the result is recorded once and replayed.',
    'Pass everything the function needs through :input; it does not close over flow-body bindings.',
  ],
  examples: [
    {
      title: 'Shape an HTTP response with a declared function',
      flow: `{:slug :function-ref-example
 :requires [{:slot :api :type :http-api}]
 :functions [{:id :names :code (fn [resp] (map :name (get-in resp [:body :items])))}]
 :flow (let [resp (flow/step :http :list {:connection :api :path "/items"})]
         (flow/step :function :extract {:ref :names :input resp}))}`,
    },
    {
      title: 'Inline code',
      flow: `{:slug :function-code-example
 :invocations {:default {:inputs [{:name :numbers :type :json :required true}]}}
 :flow (flow/step :function :total {:code (fn [xs] (reduce + 0 (filter some? xs)))
                                     :input (:numbers (flow/input))})}`,
    },
  ],
  limits: [
    {
      name: 'evaluation',
      value: 'bounded',
      description: 'Evaluation steps, recursion depth and collection sizes are capped per run.',
    },
  ],
};

const LLM: StepReference = {
  type: 'llm',
  title: 'LLM chat completion',
  summary: 'Calls an OpenAI-compatible chat completions API through a bound :llm-provider connection.',
  usage: '(flow/step :llm :step-id {:connection :llm :prompt "…"})',
  fields: [
    {
      name: 'connection',
      type: 'keyword (a :requires slot of type :llm-provider)',
      required: true,
      description: 'Slot bound to an OpenAI-compatible provider (base URL and API key).',
      check: { kind: 'slot' },
    },
    {
      name: 'model',
      type: 'string',
      required: false,
      description: 'Model name; the connection default when absent.',
      check: { kind: 'string', maxLength: 200 },
    },
    {
      name: 'prompt',
      type: 'string',
      required: false,
      description: 'The user message. Use this or :messages.',
      check: { kind: 'string' },
    },
    {
      name: 'messages',
      type: 'vector of {:role "user"|"assistant"|"system" :content "…"}',
      required: false,
      description: 'The full conversation. Use this or :prompt.',
      check: { kind: 'vector' },
    },
    {
      name: 'system',
      type: 'string',
      required: false,
      description: 'System instruction.',
      check: { kind: 'string' },
    },
    {
      name: 'response-format',
      type: 'keyword',
      required: false,
      default: ':text',
      description: ':json asks for a JSON object and parses it into :json of the result.',
      check: { kind: 'enum', values: ['text', 'json'], literal: true },
    },
    {
      name: 'temperature',
      type: 'number',
      required: false,
      description: 'Sampling temperature.',
      check: { kind: 'number', min: 0, max: 2 },
    },
    {
      name: 'max-tokens',
      type: 'integer',
      required: false,
      description: 'Cap on generated tokens.',
      check: { kind: 'integer', min: 1, max: L.llm.maxTokensMax },
    },
  ],
  rules: [{ kind: 'exactly-one', fields: ['prompt', 'messages'] }],
  result: '{:text "…" :json {…}|nil :usage {:prompt-tokens n :completion-tokens n}}',
  notes: [
    'Tokens count towards the per-run LLM token limit.',
    'With :response-format :json an unparsable reply fails the step.',
  ],
  examples: [
    {
      title: 'Summarise text',
      flow: `{:slug :llm-example
 :requires [{:slot :llm :type :llm-provider}]
 :invocations {:default {:inputs [{:name :text :type :text :required true}]}}
 :flow (flow/step :llm :summary {:connection :llm
                                 :system "You summarise text in three sentences."
                                 :prompt (:text (flow/input))
                                 :max-tokens 400})}`,
    },
  ],
  limits: [
    { name: 'max-tokens', value: L.llm.maxTokensMax, description: 'Maximum tokens per call.' },
    { name: 'timeout-ms', value: L.llm.timeoutMs, description: 'Per-call timeout.' },
  ],
};

const SLEEP: StepReference = {
  type: 'sleep',
  title: 'Durable sleep',
  summary: 'Waits without holding a worker: the run is `waiting` and resumes after the timer.',
  usage: '(flow/step :sleep :step-id {:duration-ms 60000})',
  fields: [
    {
      name: 'duration-ms',
      type: 'integer',
      required: true,
      description: 'How long to wait, in milliseconds.',
      check: { kind: 'integer', min: 0, max: L.sleep.durationMsMax },
    },
  ],
  rules: [],
  result: 'nil',
  notes: ['The timer survives restarts: the run resumes by replay and the completed sleep is not repeated.'],
  examples: [
    {
      title: 'Wait a minute between two calls',
      flow: `{:slug :sleep-example
 :flow (do (flow/step :http :ping {:url "https://example.com/ping"})
           (flow/step :sleep :pause {:duration-ms 60000})
           (flow/step :http :ping-again {:url "https://example.com/ping"}))}`,
    },
  ],
  limits: [{ name: 'duration-ms', value: L.sleep.durationMsMax, description: 'Maximum wait (7 days).' }],
};

const KV: StepReference = {
  type: 'kv',
  title: 'Key-value store',
  summary: 'Reads, writes or deletes a value in the workspace-scoped key-value store.',
  usage: '(flow/step :kv :step-id {:operation :get :key "…"})',
  fields: [
    {
      name: 'operation',
      type: 'keyword',
      required: true,
      description: ':get, :put or :delete.',
      check: { kind: 'enum', values: ['get', 'put', 'delete'], literal: true },
    },
    {
      name: 'key',
      type: 'string',
      required: true,
      description: 'The key; shared by all flows of the workspace.',
      check: { kind: 'string', maxLength: L.kv.keyLengthMax },
    },
    {
      name: 'value',
      type: 'any (JSON-compatible)',
      required: false,
      description: 'Value to store (:put only).',
      check: { kind: 'any' },
    },
    {
      name: 'ttl-s',
      type: 'integer',
      required: false,
      description: 'Expiry in seconds (:put only); no expiry when absent.',
      check: { kind: 'integer', min: 1, max: L.kv.ttlSecondsMax },
    },
  ],
  rules: [
    { kind: 'required-when', field: 'value', when: { field: 'operation', values: ['put'] } },
    { kind: 'only-when', field: 'value', when: { field: 'operation', values: ['put'] } },
    { kind: 'only-when', field: 'ttl-s', when: { field: 'operation', values: ['put'] } },
  ],
  result:
    '{:value …} — the stored value for :get (nil when absent), the written value for :put, nil for :delete.',
  notes: [
    'Keys are scoped to the workspace, not to the flow: prefix them with the flow slug to avoid collisions.',
  ],
  examples: [
    {
      title: 'Remember the last run time',
      flow: `{:slug :kv-example
 :flow (let [previous (flow/step :kv :read {:operation :get :key "kv-example/last-run"})]
         (flow/step :kv :write {:operation :put
                                :key "kv-example/last-run"
                                :value {:previous (:value previous)}
                                :ttl-s 86400}))}`,
    },
  ],
  limits: [
    { name: 'key-length', value: L.kv.keyLengthMax, description: 'Maximum key length in characters.' },
    { name: 'value-bytes', value: L.kv.valueBytesMax, description: 'Maximum serialised value size.' },
    { name: 'ttl-s', value: L.kv.ttlSecondsMax, description: 'Maximum expiry (30 days).' },
  ],
};

export const STEP_REFERENCE: Readonly<Record<StepType, StepReference>> = {
  http: HTTP,
  function: FUNCTION,
  llm: LLM,
  sleep: SLEEP,
  kv: KV,
};

/** The reference for one step type (accepts `http` or `:http`), or undefined for an unknown type. */
export function stepReference(type: string): StepReference | undefined {
  const name = type.startsWith(':') ? type.slice(1) : type;
  return isStepType(name) ? STEP_REFERENCE[name] : undefined;
}
