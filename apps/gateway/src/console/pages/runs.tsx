/** @jsxImportSource hono/jsx */
import { isLiveRunStatus, RUN_STATUSES } from '@flowgate/core';
import { formBody, refusal } from '../api.js';
import {
  type C,
  formText,
  frameOf,
  noticeOf,
  PAGE_SIZE,
  type PageKit,
  qs,
  RESULT_CSP,
  render,
} from '../kit.js';
import { Badge, Csrf, Empty, FilterSelect, Json, Notice, Pager, Table, when } from '../views.js';

/** Runs: the list, one run's timeline and result, cancel. */
export function installRunsPages(kit: PageKit): void {
  const { app: console_, api, wsParam, failed } = kit;
  const runs = (c: C) => api(c).api.workspaces[':ws'].runs;
  const runsPage = async (c: C, error?: string) => {
    const ws = c.req.param('ws') as string;
    const status = c.req.query('status') || undefined;
    const flow = c.req.query('flow') || undefined;
    const cursor = c.req.query('cursor') || undefined;
    const [res, flows] = await Promise.all([
      runs(c).$get({
        param: wsParam(c),
        // Filters go to the API as typed: its validation answers an unknown status or slug.
        query: formBody({ limit: String(PAGE_SIZE), status, flow, cursor }),
      }),
      api(c).api.workspaces[':ws'].flows.$get({ param: wsParam(c), query: { limit: '200' } }),
    ]);
    const refused = res.ok ? null : await refusal(res);
    if (refused?.status === 403) return failed(c, 'Runs', 'runs', refused);
    const page = res.ok ? await res.json() : null;
    const slugs = flows.ok ? (await flows.json()).items.map((f) => f.flowSlug) : [];
    const active = page?.items.some((r) => isLiveRunStatus(r.status)) ?? false;
    const csrf = c.get('csrf');
    return render(
      c,
      { ...frameOf(c, 'Runs', ws, 'runs'), ...(active ? { refresh: 2 } : {}) },
      <>
        <h1>Runs</h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{error}</Notice> : null}
        {refused ? <Notice kind="error">{refused.message}</Notice> : null}
        <form method="get" action={`/console/w/${ws}/runs`} class="filters">
          <FilterSelect label="Status" name="status" options={RUN_STATUSES} value={status} />
          <FilterSelect label="Flow" name="flow" options={slugs} value={flow} />
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        {page && page.items.length === 0 ? (
          <Empty>
            No runs{status || flow ? ' match these filters' : ' yet'}. Start one below, or let an agent call a
            flow tool.
          </Empty>
        ) : null}
        {page && page.items.length > 0 ? (
          <Table columns={['Run', 'Flow', 'Status', 'Created', 'Finished']}>
            {page.items.map((r) => (
              <tr>
                <td class="mono">
                  <a href={`/console/w/${ws}/runs/${r.runId}`}>{r.runId}</a>
                </td>
                <td>{r.flowSlug}</td>
                <td>
                  <Badge value={r.status} />
                </td>
                <td>{when(r.createdAt)}</td>
                <td>{when(r.finishedAt)}</td>
              </tr>
            ))}
          </Table>
        ) : null}
        <Pager
          next={
            page?.nextCursor ? `/console/w/${ws}/runs${qs({ status, flow, cursor: page.nextCursor })}` : null
          }
        />
        <h2>Start a run</h2>
        {slugs.length === 0 ? (
          <Empty>
            No flows in this workspace yet. Publish one with <code>flowgate flows push</code>.
          </Empty>
        ) : (
          <form method="post" action={`/console/w/${ws}/runs`} class="stack">
            <Csrf token={csrf} />
            <label>
              Flow
              <select name="flow" required>
                {slugs.map((s) => (
                  <option value={s}>{s}</option>
                ))}
              </select>
            </label>
            <label>
              Input (JSON object)
              <textarea name="input" spellcheck={false}>
                {'{}'}
              </textarea>
            </label>
            <button type="submit">Start run</button>
          </form>
        )}
      </>,
      error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/runs', (c) => runsPage(c));
  console_.post('/console/w/:ws/runs', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const flow = formText(form, 'flow');
    let input: unknown;
    try {
      input = JSON.parse(formText(form, 'input') || '{}');
    } catch {
      return runsPage(c, 'Input must be a JSON object.');
    }
    const res = await api(c).api.workspaces[':ws'].flows[':slug'].runs.$post({
      param: { ...wsParam(c), slug: encodeURIComponent(flow) },
      json: formBody({ input }),
    });
    if (!res.ok) {
      const refused = await refusal(res);
      return refused.status === 403 ? failed(c, 'Runs', 'runs', refused) : runsPage(c, refused.message);
    }
    const { runId } = await res.json();
    return c.redirect(`/console/w/${c.req.param('ws')}/runs/${runId}?done=run-started`, 303);
  });

  const runDetail = (c: C, runId: string) =>
    runs(c)[':runId'].$get({ param: { ...wsParam(c), runId: encodeURIComponent(runId) } });
  console_.get('/console/w/:ws/runs/:runId', async (c) => {
    const ws = c.req.param('ws');
    const res = await runDetail(c, c.req.param('runId'));
    if (!res.ok) return failed(c, 'Run', 'runs', await refusal(res));
    const run = await res.json();
    const active = isLiveRunStatus(run.status);
    const mime = run.result?.mimeType ?? null;
    return render(
      c,
      { ...frameOf(c, `Run ${run.runId}`, ws, 'runs'), ...(active ? { refresh: 2 } : {}) },
      <>
        <h1>
          Run <span class="mono">{run.runId}</span> <Badge value={run.status} />
        </h1>
        {noticeOf(c)}
        <p>
          Flow <strong>{run.flowSlug}</strong>
          {run.version !== null ? ` v${run.version}` : ''} · created {when(run.createdAt)} · finished{' '}
          {when(run.finishedAt)}
        </p>
        {active ? (
          <form method="post" action={`/console/w/${ws}/runs/${run.runId}/cancel`}>
            <Csrf token={c.get('csrf')} />
            <button type="submit" class="danger">
              Cancel run
            </button>
          </form>
        ) : null}
        {run.error ? (
          <Notice kind="error">
            {run.error.code ?? 'error'}: {run.error.message ?? ''}
          </Notice>
        ) : null}
        <h2>Result</h2>
        {run.result === null ? (
          <Empty>
            {active ? 'No result yet; this page refreshes until the run ends.' : 'This run has no result.'}
          </Empty>
        ) : mime?.startsWith('text/html') ? (
          <iframe
            class="result"
            title={`Result of run ${run.runId}`}
            sandbox=""
            src={`/console/w/${ws}/runs/${run.runId}/result`}
          />
        ) : (
          <>
            <p class="muted">{mime}</p>
            {typeof run.result.value === 'string' ? (
              <pre tabindex={0}>{run.result.value}</pre>
            ) : (
              <Json value={run.result.value} />
            )}
          </>
        )}
        <h2>Steps</h2>
        {run.steps.length === 0 ? (
          <Empty>No steps recorded yet.</Empty>
        ) : (
          <ol class="timeline">
            {run.steps.map((s) => (
              <li>
                <strong class="mono">{s.stepId}</strong> <span class="muted">{s.type}</span>{' '}
                <Badge value={s.status} />{' '}
                <span class="muted">
                  {when(s.startedAt)} → {when(s.finishedAt)}
                  {s.attempts > 1 ? ` · ${s.attempts} attempts` : ''}
                </span>
                {s.error ? (
                  <div>
                    {s.error.code}: {s.error.message}
                  </div>
                ) : null}
              </li>
            ))}
          </ol>
        )}
        <h2>Events</h2>
        {run.events.length === 0 ? (
          <Empty>No events yet.</Empty>
        ) : (
          <Table columns={['At', 'Event', 'Step', 'Status']}>
            {run.events.map((e) => (
              <tr>
                <td>{when(e.at)}</td>
                <td>{e.type}</td>
                <td class="mono">{e.stepId ?? '—'}</td>
                <td>{e.status ?? '—'}</td>
              </tr>
            ))}
          </Table>
        )}
        <h2>Input</h2>
        <Json value={run.input} />
      </>,
    );
  });
  console_.get('/console/w/:ws/runs/:runId/result', async (c) => {
    const res = await runDetail(c, c.req.param('runId'));
    if (!res.ok) {
      const refused = await refusal(res);
      return c.text(refused.message, refused.status as 404);
    }
    const run = await res.json();
    const value = run.result?.value;
    const body = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    const type = run.result?.mimeType?.startsWith('text/html')
      ? 'text/html; charset=utf-8'
      : 'text/plain; charset=utf-8';
    return c.body(body, 200, {
      'Content-Type': type,
      'Content-Security-Policy': RESULT_CSP,
      'X-Frame-Options': 'SAMEORIGIN',
    });
  });
  console_.post('/console/w/:ws/runs/:runId/cancel', async (c) => {
    const runId = c.req.param('runId');
    const res = await runs(c)[':runId'].cancel.$post({
      param: { ...wsParam(c), runId: encodeURIComponent(runId) },
    });
    if (!res.ok) return failed(c, 'Run', 'runs', await refusal(res));
    return c.redirect(
      `/console/w/${c.req.param('ws')}/runs/${encodeURIComponent(runId)}?done=run-cancelled`,
      303,
    );
  });
}
