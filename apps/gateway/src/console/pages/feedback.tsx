/** @jsxImportSource hono/jsx */
import { FEEDBACK_AREAS } from '@flowgate/workspace';
import { refusal } from '../api.js';
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

/** What agents and people reported with send_feedback, newest first, through the admin API's feedback list. */
export function installFeedbackPage(kit: PageKit): void {
  const { app: console_, api, wsParam, failed } = kit;
  console_.get('/console/w/:ws/feedback', async (c) => {
    const ws = c.req.param('ws');
    const rawArea = c.req.query('area') ?? '';
    const area = FEEDBACK_AREAS.find((x) => x === rawArea);
    const cursor = c.req.query('cursor') || undefined;
    const since = utcMinute(c.req.query('since'));
    const res = await api(c).api.workspaces[':ws'].feedback.$get({
      param: wsParam(c),
      query: { limit: String(PAGE_SIZE), area, since: since && `${since}:00Z`, cursor },
    });
    const refused = res.ok ? null : await refusal(res);
    if (refused?.status === 403) return failed(c, 'Feedback', 'feedback', refused);
    const page = res.ok ? await res.json() : null;
    return render(
      c,
      frameOf(c, 'Feedback', ws, 'feedback'),
      <>
        <h1>Feedback</h1>
        <p class="muted">
          What agents (and people) reported with the <span class="mono">send_feedback</span> tool: unclear
          docs, setup problems, runtime errors, confusing flow interfaces. Secrets were redacted before
          storing.
        </p>
        {refused ? <Notice kind="error">{refused.message}</Notice> : null}
        <form method="get" action={`/console/w/${ws}/feedback`} class="filters">
          <FilterSelect label="Area" name="area" options={FEEDBACK_AREAS} value={area} />
          <FilterInstant label="From" name="since" value={since} />
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        {page && page.items.length === 0 ? (
          <Empty>
            No feedback{area || since ? ' matches these filters' : ' yet'}. Agents send it with the
            send_feedback tool (toolset <span class="mono">feedback</span>, capability{' '}
            <span class="mono">feedback.send</span>).
          </Empty>
        ) : null}
        {page && page.items.length > 0 ? (
          <Table columns={['At', 'From', 'Area', 'Feedback', 'About']}>
            {page.items.map((f) => (
              <tr>
                <td>{when(f.createdAt)}</td>
                <td>
                  {f.principalType} <span class="mono">{f.principalId}</span>
                </td>
                <td>
                  <Badge value={f.area} />
                </td>
                <td>
                  <strong>{f.summary}</strong>
                  {f.details ? <p class="details">{f.details}</p> : null}
                  {f.context ? <Json value={f.context} /> : null}
                </td>
                <td class="mono">
                  {f.flowSlug ? <a href={`/console/w/${ws}/flows/${f.flowSlug}`}>{f.flowSlug}</a> : null}
                  {f.runId ? (
                    <>
                      {' '}
                      <a href={`/console/w/${ws}/runs/${encodeURIComponent(f.runId)}`}>run</a>
                    </>
                  ) : null}
                  {f.resourceUri ? <> {f.resourceUri}</> : null}
                  {!f.flowSlug && !f.runId && !f.resourceUri ? '—' : null}
                </td>
              </tr>
            ))}
          </Table>
        ) : null}
        <Pager
          next={
            page?.nextCursor
              ? `/console/w/${ws}/feedback${qs({ area, since, cursor: page.nextCursor })}`
              : null
          }
        />
      </>,
    );
  });
}
