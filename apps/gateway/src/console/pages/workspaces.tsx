/** @jsxImportSource hono/jsx */
import { type Refusal, refusal } from '../api.js';
import { Sparkline } from '../charts.js';
import { type C, formText, frameOf, noticeOf, PAGE_SIZE, type PageKit, qs, render } from '../kit.js';
import { Csrf, Empty, Notice, Pager, Table, when } from '../views.js';
import { usageWindow } from './usage.js';

/** Days of calls each workspace's sparkline shows. */
const SPARK_DAYS = 14;

/** The operator's workspaces page. */
export function installWorkspacesPage(kit: PageKit): void {
  const { app: console_, deps, api, failed } = kit;
  const now = () => deps.workspaceDeps.now?.() ?? new Date();
  const workspacesPage = async (c: C, error?: Refusal, form?: { id: string; name: string }) => {
    const after = c.req.query('after') || undefined;
    const res = await api(c).api.admin.workspaces.$get({
      query: { limit: String(PAGE_SIZE), cursor: after },
    });
    if (!res.ok) return failed(c, 'Workspaces', 'workspaces', await refusal(res));
    const { items, nextCursor: next } = await res.json();
    // Calls per day of every workspace that had any; one without usage draws a flat line. A failed ranking leaves
    // the column empty rather than the page.
    const span = usageWindow('day', SPARK_DAYS, now());
    const usageAnswer = await api(c).api.admin.usage.$get({
      query: { from: span.from.toISOString(), to: span.to.toISOString(), granularity: 'day' },
    });
    const ranking = usageAnswer.ok ? (await usageAnswer.json()).items : null;
    const usageOf = new Map(ranking?.map((r) => [r.workspaceId, r]));
    const days = span.buckets.map((b) => b.slice(0, 10));
    return render(
      c,
      frameOf(c, 'Workspaces', null, 'workspaces'),
      <>
        <h1>Workspaces</h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{error.message}</Notice> : null}
        <form method="post" action="/console/workspaces" class="filters">
          <Csrf token={c.get('csrf')} />
          <label>
            Id (lowercase letters, digits, dashes)
            <input name="id" required maxlength={63} value={form?.id ?? ''} />
          </label>
          <label>
            Name
            <input name="name" required maxlength={200} value={form?.name ?? ''} />
          </label>
          <button type="submit" class="secondary">
            Create workspace
          </button>
        </form>
        {items.length === 0 ? (
          <Empty>No workspaces yet. Create the first one with the form above.</Empty>
        ) : (
          <Table columns={['Id', 'Name', 'Created', `Calls, last ${SPARK_DAYS} days`]}>
            {items.map((w) => (
              <tr>
                <td>
                  <a href={`/console/w/${w.id}/keys`}>{w.id}</a>
                </td>
                <td>{w.name}</td>
                <td>{when(w.createdAt)}</td>
                <td>
                  {ranking ? <UsageCell id={w.id} days={days} daily={usageOf.get(w.id)?.daily ?? []} /> : '—'}
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pager next={next ? `/console/workspaces${qs({ after: next })}` : null} />
      </>,
      error ? (error.status >= 400 ? error.status : 500) : 200,
    );
  };
  console_.get('/console/workspaces', (c) => workspacesPage(c));
  console_.post('/console/workspaces', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const body = { id: formText(form, 'id'), name: formText(form, 'name') };
    const res = await api(c).api.admin.workspaces.$post({ json: body });
    if (!res.ok) {
      const refused = await refusal(res);
      if (refused.status === 403) return failed(c, 'Workspaces', 'workspaces', refused);
      return workspacesPage(c, refused, body);
    }
    return c.redirect('/console/workspaces?done=ws-created', 303);
  });
}

/** A workspace's calls per day as a sparkline with its total; days the answer lacks count as none. */
function UsageCell(props: { id: string; days: string[]; daily: readonly number[] }) {
  const values = props.days.map((_, i) => props.daily[i] ?? 0);
  const total = values.reduce((a, b) => a + b, 0);
  return (
    <div class="spark-cell" data-workspace={props.id} data-total={total}>
      <Sparkline
        id={`spark-${props.id}`}
        title={`Calls per day of ${props.id}`}
        description={`${total.toLocaleString('en-US')} MCP calls in the last ${props.days.length} days, from ${props.days[0]} to ${props.days.at(-1)}.`}
        values={values}
        labels={props.days}
      />
      <span class="muted">{total.toLocaleString('en-US')}</span>
    </div>
  );
}
