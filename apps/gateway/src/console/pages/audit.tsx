/** @jsxImportSource hono/jsx */
import { formBody, refusal } from '../api.js';
import { frameOf, PAGE_SIZE, type PageKit, qs, render } from '../kit.js';
import {
  Badge,
  Empty,
  FilterInstant,
  FilterSelect,
  Json,
  Notice,
  Pager,
  Table,
  utcMinute,
  when,
} from '../views.js';

/** The audit log with its filters. */
export function installAuditPage(kit: PageKit): void {
  const { app: console_, api, wsParam, failed } = kit;
  console_.get('/console/w/:ws/audit', async (c) => {
    const ws = c.req.param('ws');
    const key = c.req.query('key') || undefined;
    const tool = c.req.query('tool') || undefined;
    const outcome = c.req.query('outcome') || undefined;
    const before = c.req.query('before') || undefined;
    const since = utcMinute(c.req.query('since'));
    const until = utcMinute(c.req.query('until'));
    const res = await api(c).api.workspaces[':ws'].audit.$get({
      param: wsParam(c),
      // Filters go to the API as typed: its validation answers an unknown outcome.
      query: formBody({
        limit: String(PAGE_SIZE),
        key,
        tool,
        outcome,
        cursor: before,
        since: since && `${since}:00Z`,
        until: until && `${until}:00Z`,
      }),
    });
    const refused = res.ok ? null : await refusal(res);
    if (refused?.status === 403) return failed(c, 'Audit', 'audit', refused);
    const page = res.ok ? await res.json() : null;
    return render(
      c,
      frameOf(c, 'Audit', ws, 'audit'),
      <>
        <h1>Audit</h1>
        {refused ? <Notice kind="error">{refused.message}</Notice> : null}
        <form method="get" action={`/console/w/${ws}/audit`} class="filters">
          <label>
            Key id
            <input name="key" value={key ?? ''} maxlength={64} />
          </label>
          <label>
            Tool or action
            <input name="tool" value={tool ?? ''} maxlength={200} />
          </label>
          <FilterSelect
            label="Outcome"
            name="outcome"
            options={['ok', 'error', 'blocked', 'denied']}
            value={outcome}
          />
          <FilterInstant label="From" name="since" value={since} />
          <FilterInstant label="Until" name="until" value={until} />
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        {page && page.items.length === 0 ? (
          <Empty>
            No audit entries{key || tool || outcome || since || until ? ' match these filters' : ' yet'}.
            Every MCP tool call and admin action is recorded here.
          </Empty>
        ) : null}
        {page && page.items.length > 0 ? (
          <Table columns={['At', 'Who', 'Kind', 'Tool / action', 'Outcome', 'Blockers']}>
            {page.items.map((e) => (
              <tr>
                <td>{when(e.at)}</td>
                <td>
                  {e.principalType} <span class="mono">{e.keyId ?? e.principalId}</span>
                </td>
                <td>{e.kind}</td>
                <td class="mono">
                  {e.action}
                  {e.count > 1 ? ` ×${e.count}` : ''}
                  {e.runId ? (
                    <>
                      {' '}
                      <a href={`/console/w/${ws}/runs/${e.runId}`}>run</a>
                    </>
                  ) : null}
                </td>
                <td>
                  <Badge value={e.outcome} /> {e.errorCode ? <span class="mono">{e.errorCode}</span> : null}
                </td>
                <td>{e.blockers ? <Json value={e.blockers} /> : '—'}</td>
              </tr>
            ))}
          </Table>
        ) : null}
        <Pager
          next={
            page?.nextCursor
              ? `/console/w/${ws}/audit${qs({ key, tool, outcome, since, until, before: page.nextCursor })}`
              : null
          }
        />
      </>,
    );
  });
}
