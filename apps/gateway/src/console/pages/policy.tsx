/** @jsxImportSource hono/jsx */
import { formBody, refusal } from '../api.js';
import {
  type C,
  entries,
  formText,
  frameOf,
  noticeOf,
  type PageKit,
  type PolicyDraft,
  render,
} from '../kit.js';
import { Csrf, Empty, Notice, Table } from '../views.js';

const QUOTA_FIELDS = [
  ['runsPerMonth', 'Runs per month'],
  ['llmTokensPerMonth', 'LLM tokens per month'],
  ['toolCallsPerDay', 'MCP tool calls per day'],
] as const;

type QuotaField = (typeof QUOTA_FIELDS)[number][0];

const quotaText = (value: number | null) => (value === null ? '' : String(value));

/** A typed number field as the API gets it: empty is null; anything but digits goes as typed, for the API to refuse. */
function typedNumber(text: string): number | string | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/** The MCP policy form and its tools/list preview. */
export function installPolicyPage(kit: PageKit): void {
  const { app: console_, deps, api, wsParam, failed } = kit;
  const workspace = (c: C) => api(c).api.workspaces[':ws'];
  const NARROWING_FIELDS = [
    ['x-mcp-toolsets', 'X-MCP-Toolsets', 'comma-separated toolsets'],
    ['x-mcp-tools', 'X-MCP-Tools', 'comma-separated tool names'],
    ['x-mcp-exclude-tools', 'X-MCP-Exclude-Tools', 'comma-separated tool names'],
    ['x-mcp-readonly', 'X-MCP-Readonly', 'true or false'],
  ] as const;
  const policyPage = async (c: C, extra: { error?: string; draft?: PolicyDraft }) => {
    const ws = c.req.param('ws') as string;
    const [policyAnswer, accountsAnswer, quotasAnswer] = await Promise.all([
      workspace(c)['mcp-policy'].$get({ param: wsParam(c) }),
      workspace(c)['service-accounts'].$get({ param: wsParam(c), query: { limit: '200' } }),
      workspace(c).quotas.$get({ param: wsParam(c) }),
    ]);
    if (!policyAnswer.ok) return failed(c, 'MCP policy', 'policy', await refusal(policyAnswer));
    const policy = await policyAnswer.json();
    const accounts = accountsAnswer.ok ? (await accountsAnswer.json()).items : [];
    const standing = quotasAnswer.ok ? (await quotasAnswer.json()).items : [];
    const quotaCell = (name: QuotaField) => {
      const limit = policy.quotas[name];
      if (limit === null) return 'no quota';
      const now = standing.find((q) => q.quota === name);
      const used = now ? `; ${now.used.toLocaleString('en')} used, resets ${now.resetsAt}` : '';
      return `${limit.toLocaleString('en')}${used}`;
    };
    const sa = c.req.query('sa') || accounts[0]?.serviceAccountId || '';
    const headerValues = Object.fromEntries(
      NARROWING_FIELDS.map(([name]) => [name, c.req.query(name) ?? '']),
    );
    const preview = sa
      ? await workspace(c)['service-accounts'][':sa']['tools-preview'].$get({
          param: { ...wsParam(c), sa: encodeURIComponent(sa) },
          query: headerValues,
        })
      : null;
    const result = preview?.ok ? await preview.json() : null;
    const previewRefused = preview && !preview.ok ? await refusal(preview) : null;
    const list = (items: string[]) =>
      items.length === 0 ? <span class="muted">none</span> : <code>{items.join(', ')}</code>;
    // After a refused save the form keeps what was typed; otherwise it shows the stored policy.
    const draft: PolicyDraft = extra.draft ?? {
      readOnly: policy.readOnly,
      disabledTools: policy.disabledTools,
      allowedOrigins: policy.allowedOrigins.join('\n'),
      allowedIps: policy.allowedIps.join('\n'),
      rateLimitPerMinute: policy.rateLimitPerMinute === null ? '' : String(policy.rateLimitPerMinute),
      quotas: {
        runsPerMonth: quotaText(policy.quotas.runsPerMonth),
        llmTokensPerMonth: quotaText(policy.quotas.llmTokensPerMonth),
        toolCallsPerDay: quotaText(policy.quotas.toolCallsPerDay),
      },
    };
    const csrf = c.get('csrf');
    return render(
      c,
      frameOf(c, 'MCP policy', ws, 'policy'),
      <>
        <h1>MCP policy</h1>
        {noticeOf(c)}
        {extra.error ? <Notice kind="error">{extra.error}</Notice> : null}
        <div class="scroll" tabindex={0}>
          <table>
            <tbody>
              <tr>
                <th scope="row">Read-only</th>
                <td>{policy.readOnly ? 'yes: mutating tools are hidden' : 'no'}</td>
              </tr>
              <tr>
                <th scope="row">Disabled tools</th>
                <td>{list(policy.disabledTools)}</td>
              </tr>
              <tr>
                <th scope="row">Allowed origins</th>
                <td>{list(policy.allowedOrigins)}</td>
              </tr>
              <tr>
                <th scope="row">IP allowlist</th>
                <td>{policy.allowedIps.length === 0 ? 'any address' : list(policy.allowedIps)}</td>
              </tr>
              <tr>
                <th scope="row">Rate limit</th>
                <td>
                  {policy.rateLimitPerMinute === null
                    ? 'deployment default per key'
                    : `${policy.rateLimitPerMinute} requests a minute per key`}
                </td>
              </tr>
              {QUOTA_FIELDS.map(([name, label]) => (
                <tr>
                  <th scope="row">{label}</th>
                  <td>{quotaCell(name)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <h2>Change the policy</h2>
        <p class="muted">
          The same change as <code>flowgate mcp-policy set</code> or <code>PUT …/mcp-policy</code>; it
          replaces every field below.
        </p>
        <form method="post" action={`/console/w/${ws}/policy`} class="stack">
          <Csrf token={csrf} />
          <label class="check">
            <input type="checkbox" name="readOnly" value="true" checked={draft.readOnly} />
            Read-only: hide mutating tools
          </label>
          <fieldset>
            <legend>Disabled tools</legend>
            {deps.toolNames.map((t) => (
              <label class="check mono">
                <input
                  type="checkbox"
                  name="disabledTools"
                  value={t}
                  checked={draft.disabledTools.includes(t)}
                />
                {t}
              </label>
            ))}
          </fieldset>
          <label>
            Allowed origins (one per line; empty allows any)
            <textarea name="allowedOrigins" rows={3} maxlength={16000} placeholder="https://app.example.com">
              {draft.allowedOrigins}
            </textarea>
          </label>
          <label>
            IP allowlist (addresses or CIDR ranges, one per line; empty allows any)
            <textarea name="allowedIps" rows={3} maxlength={8000} placeholder="203.0.113.0/24">
              {draft.allowedIps}
            </textarea>
          </label>
          <label>
            Rate limit per minute per key (empty for the deployment default)
            <input
              name="rateLimitPerMinute"
              inputmode="numeric"
              value={draft.rateLimitPerMinute}
              maxlength={16}
            />
          </label>
          <fieldset>
            <legend>Quotas (empty for none; periods are UTC, counted from when a quota is set)</legend>
            {QUOTA_FIELDS.map(([name, label]) => (
              <label>
                {label}
                <input name={name} inputmode="numeric" value={draft.quotas[name]} maxlength={16} />
              </label>
            ))}
          </fieldset>
          <button type="submit">Save policy</button>
        </form>
        <h2>Preview the tool list</h2>
        {accounts.length === 0 ? (
          <Empty>
            No service accounts yet. <a href={`/console/w/${ws}/keys`}>Create one</a> to preview what its keys
            see.
          </Empty>
        ) : (
          <form method="get" action={`/console/w/${ws}/policy`} class="filters" data-autosubmit="">
            <label>
              Service account
              <select name="sa">
                {accounts.map((a) => (
                  <option value={a.serviceAccountId} selected={a.serviceAccountId === sa}>
                    {a.name}
                  </option>
                ))}
              </select>
            </label>
            {NARROWING_FIELDS.map(([name, label, hint]) => (
              <label>
                {label}
                <input name={name} value={headerValues[name]} placeholder={hint} maxlength={2000} />
              </label>
            ))}
            <button type="submit" class="secondary">
              Preview
            </button>
          </form>
        )}
        {previewRefused ? <Notice kind="error">{previewRefused.message}</Notice> : null}
        {result ? (
          <section aria-live="polite" aria-labelledby="preview-visible">
            <h3 id="preview-visible">tools/list: {result.visible.length} tools</h3>
            {result.visible.length === 0 ? (
              <Empty>No tool is visible: grant capabilities to the account or loosen the headers.</Empty>
            ) : (
              <ul class="mono" id="visible-tools">
                {result.visible.map((t) => (
                  <li>{t}</li>
                ))}
              </ul>
            )}
            <h3>Hidden ({result.hidden.length})</h3>
            <Table columns={['Tool', 'Why']}>
              {result.hidden.map((h) => (
                <tr>
                  <td class="mono">{h.name}</td>
                  <td>{h.blockers.map((b) => b.reason).join(', ')}</td>
                </tr>
              ))}
            </Table>
          </section>
        ) : null}
      </>,
      extra.error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/policy', (c) => policyPage(c, {}));
  console_.post('/console/w/:ws/policy', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const tools = form.disabledTools;
    const draft: PolicyDraft = {
      readOnly: formText(form, 'readOnly') === 'true',
      disabledTools: (Array.isArray(tools) ? tools : tools ? [tools] : []).filter(
        (x): x is string => typeof x === 'string',
      ),
      allowedOrigins: formText(form, 'allowedOrigins'),
      allowedIps: formText(form, 'allowedIps'),
      rateLimitPerMinute: formText(form, 'rateLimitPerMinute'),
      quotas: {
        runsPerMonth: formText(form, 'runsPerMonth'),
        llmTokensPerMonth: formText(form, 'llmTokensPerMonth'),
        toolCallsPerDay: formText(form, 'toolCallsPerDay'),
      },
    };
    const rate = draft.rateLimitPerMinute;
    const res = await workspace(c)['mcp-policy'].$put({
      param: wsParam(c),
      json: formBody({
        readOnly: draft.readOnly,
        disabledTools: draft.disabledTools,
        allowedOrigins: entries(draft.allowedOrigins),
        allowedIps: entries(draft.allowedIps),
        // Anything but digits goes to the API as typed, so its validation (not a silent NaN) answers.
        rateLimitPerMinute: typedNumber(rate),
        quotas: {
          runsPerMonth: typedNumber(draft.quotas.runsPerMonth),
          llmTokensPerMonth: typedNumber(draft.quotas.llmTokensPerMonth),
          toolCallsPerDay: typedNumber(draft.quotas.toolCallsPerDay),
        },
      }),
    });
    if (!res.ok) {
      const refused = await refusal(res);
      if (refused.status === 403) return failed(c, 'MCP policy', 'policy', refused);
      return policyPage(c, { error: refused.message, draft });
    }
    return c.redirect(`/console/w/${c.req.param('ws')}/policy?done=policy-saved`, 303);
  });
}
