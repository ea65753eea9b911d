import { describe, expect, it } from 'vitest';
import { validateFlow } from './validate.js';

const REQUIRES =
  ' :requires [{:slot :ai :type :llm-provider} {:slot :docs :type :mcp-server} {:slot :api :type :http-api}]';
const flow = (body: string) => `{:slug :t${REQUIRES}\n :flow ${body}}`;
const problems = (text: string) =>
  validateFlow(text).diagnostics.map((d) => ({
    code: d.code,
    message: d.message,
    path: d.path,
    line: d.line,
    column: d.column,
  }));

describe('the :mcp step', () => {
  it('validates a call and records its slot and tool on the model', () => {
    const result = validateFlow(
      flow(
        '(flow/step :mcp :search {:connection :docs :tool "search" :arguments {:q "x"} :on-error :return})',
      ),
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.model?.steps).toEqual([
      { id: 'search', type: 'mcp', connection: 'docs', mcpTools: [{ slot: 'docs', names: ['search'] }] },
    ]);
  });

  it('refuses a slot of another connection type, at the slot', () => {
    expect(problems(flow('(flow/step :mcp :s {:connection :api :tool "search"})'))).toEqual([
      {
        code: 'invalid_step_config',
        message: ':connection names slot :api of type :http-api; it must be a slot of type :mcp-server',
        path: ':flow 3 :connection',
        line: 2,
        column: 40,
      },
    ]);
  });

  it('needs :tool as a string written in place', () => {
    expect(problems(flow('(flow/step :mcp :s {:connection :docs :tool :search})'))).toEqual([
      {
        code: 'invalid_step_config',
        message: ':tool must be a string, found the keyword :search',
        path: ':flow 3 :tool',
        line: 2,
        column: 52,
      },
    ]);
    expect(problems(flow('(flow/step :mcp :s {:connection :docs :tool (str "a" "b")})'))[0]?.message).toBe(
      ':tool must be a string written in place, not an expression',
    );
    expect(problems(flow('(flow/step :mcp :s {:connection :docs})'))[0]?.message).toBe(
      'a :mcp step needs :tool',
    );
    expect(
      problems(
        flow('(flow/step :mcp :s {:connection :docs :tool "x" :timeout-ms 60001 :on-error :ignore})'),
      ).map((p) => p.message),
    ).toEqual([
      ':timeout-ms must be between 1 and 60000, found 60001',
      ':on-error must be one of :fail :return, found the keyword :ignore',
    ]);
  });
});

describe(':tools of an :llm step', () => {
  const llm = (tools: string) =>
    flow(`(flow/step :llm :ask {:connection :ai :prompt "q"\n :tools ${tools}})`);

  it('validates allowlists and records them on the model', () => {
    const result = validateFlow(
      llm('[{:mcp :docs :allow ["search" {:name "fetch" :trusted-metadata true}] :trusted-metadata false}]'),
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.model?.steps).toEqual([
      { id: 'ask', type: 'llm', connection: 'ai', mcpTools: [{ slot: 'docs', names: ['search', 'fetch'] }] },
    ]);
  });

  it('refuses a :tools slot of another type, an empty allowlist, unknown keys and non-string names', () => {
    expect(problems(llm('[{:mcp :ai :allow ["search"]}]'))).toEqual([
      {
        code: 'invalid_step_config',
        message: ':mcp names slot :ai of type :llm-provider; it must be a slot of type :mcp-server',
        path: ':flow 3 :tools 0 :mcp',
        line: 3,
        column: 16,
      },
    ]);
    expect(problems(llm('[{:mcp :docs :allow []}]'))).toEqual([
      {
        code: 'invalid_step_config',
        message: ':allow is empty',
        path: ':flow 3 :tools 0 :allow',
        line: 3,
        column: 29,
      },
    ]);
    expect(problems(llm('[{:mcp :docs :allow ["a"] :trust true}]'))).toEqual([
      {
        code: 'invalid_step_config',
        message: 'unknown key :trust in a :tools entry',
        path: ':flow 3 :tools 0 :trust',
        line: 3,
        column: 35,
      },
    ]);
    expect(problems(llm('[{:mcp :docs :allow [{:name "a" :trusted true}]}]'))).toEqual([
      {
        code: 'invalid_step_config',
        message: 'unknown key :trusted in an :allow entry',
        path: ':flow 3 :tools 0 :allow 0 :trusted',
        line: 3,
        column: 41,
      },
    ]);
    expect(problems(llm('[{:mcp :docs :allow [:search 42 ""]}]')).map((p) => [p.message, p.path])).toEqual([
      [
        'a tool in :allow must be a string name or {:name "…" :trusted-metadata true}, found the keyword :search',
        ':flow 3 :tools 0 :allow 0',
      ],
      [
        'a tool in :allow must be a string name or {:name "…" :trusted-metadata true}, found the number 42',
        ':flow 3 :tools 0 :allow 1',
      ],
      ['a tool name must not be empty', ':flow 3 :tools 0 :allow 2'],
    ]);
    expect(problems(llm('[{:mcp :docs :allow [{:name :search}]}]'))[0]?.message).toBe(
      ':name must be a string, found the keyword :search',
    );
  });

  it('needs the allowlist and the trust flags written in place', () => {
    expect(problems(llm('(:tools (flow/input))'))[0]?.message).toBe(
      ':tools must be a vector written in place, not an expression',
    );
    expect(problems(llm('[{:mcp :docs :allow (:names (flow/input))}]'))[0]?.message).toBe(
      ':allow must be a vector written in place, not an expression',
    );
    expect(problems(llm('[{:mcp :docs :allow ["a"] :trusted-metadata (:t (flow/input))}]'))[0]?.message).toBe(
      ':trusted-metadata must be true or false written in place, not an expression',
    );
    expect(problems(llm('[{:allow ["a" "a"]}]')).map((p) => p.message)).toEqual([
      'a :tools entry needs :mcp',
      'tool "a" is allowed twice (first at line 3, column 19)',
    ]);
    expect(problems(llm('[]'))[0]?.message).toBe(':tools is empty');
  });

  it('checks the :llm connection type and :max-tool-rounds', () => {
    expect(problems(flow('(flow/step :llm :ask {:connection :docs :prompt "q"})'))[0]?.message).toBe(
      ':connection names slot :docs of type :mcp-server; it must be a slot of type :llm-provider',
    );
    expect(
      problems(flow('(flow/step :llm :ask {:connection :ai :prompt "q" :max-tool-rounds 11})'))[0]?.message,
    ).toBe(':max-tool-rounds must be between 1 and 10, found 11');
  });
});
