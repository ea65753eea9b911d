/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx';
import type { ApiAnswer } from '../inner.js';
import {
  type C,
  type Connection,
  type FlowDetail,
  type FlowSummary,
  formText,
  frameOf,
  type Installation,
  message,
  noticeOf,
  PAGE_SIZE,
  type PageKit,
  qs,
  render,
} from '../kit.js';
import { Badge, Csrf, Empty, Json, Notice, Pager, Table, when } from '../views.js';

/** The slot-binding form of a flow or an installation page (`children`: fields only one of them has). */
function BindSlotForm(props: {
  ws: string;
  action: string;
  csrf: string;
  connections: Connection[];
  children?: Child;
}) {
  if (props.connections.length === 0)
    return (
      <Empty>
        No connections to bind yet. <a href={`/console/w/${props.ws}/connections`}>Create one</a> first.
      </Empty>
    );
  return (
    <form method="post" action={props.action} class="filters">
      <Csrf token={props.csrf} />
      <label>
        Slot
        <input name="slot" required maxlength={64} />
      </label>
      <label>
        Connection
        <select name="connectionId">
          {props.connections.map((x) => (
            <option value={x.connectionId}>{x.name}</option>
          ))}
        </select>
      </label>
      {props.children}
      <button type="submit" class="secondary">
        Bind slot
      </button>
    </form>
  );
}

/** Flows, their versions and trust, and installations. */
export function installFlowsPages(kit: PageKit): void {
  const { app: console_, api, wsPath, failed } = kit;
  console_.get('/console/w/:ws/flows', async (c) => {
    const ws = c.req.param('ws') as string;
    const cursor = c.req.query('cursor') || undefined;
    const [answer, installed] = await Promise.all([
      api(c, 'GET', wsPath(c, `/flows${qs({ limit: PAGE_SIZE, cursor })}`)),
      api(c, 'GET', wsPath(c, `/installations${qs({ limit: PAGE_SIZE })}`)),
    ]);
    if (answer.status !== 200) return failed(c, 'Flows', 'flows', answer);
    const page = answer.body as { items: FlowSummary[]; nextCursor: string | null };
    const installations =
      installed.status === 200
        ? (
            installed.body as {
              items: {
                installationId: string;
                sourceWorkspaceId: string;
                flowSlug: string;
                versionPolicy: string;
                pinnedVersion: number | null;
                enabled: boolean;
              }[];
            }
          ).items
        : [];
    return render(
      c,
      frameOf(c, 'Flows', ws, 'flows'),
      <>
        <h1>Flows</h1>
        {page.items.length === 0 ? (
          <Empty>
            No flows yet. Save one with <code>flowgate flows push</code> (or PUT …/flows/&lt;slug&gt;/draft),
            then release it here.
          </Empty>
        ) : (
          <Table columns={['Flow', 'Description', 'Live', 'Latest', 'Draft']}>
            {page.items.map((f) => (
              <tr>
                <td>
                  <a href={`/console/w/${ws}/flows/${f.flowSlug}`}>{f.flowSlug}</a>
                  <div class="muted">{f.name}</div>
                </td>
                <td>{f.description ?? '—'}</td>
                <td>{f.liveVersion === null ? 'not released' : `v${f.liveVersion}`}</td>
                <td>{f.latestVersion === null ? '—' : `v${f.latestVersion}`}</td>
                <td>{f.hasDraft ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </Table>
        )}
        <Pager next={page.nextCursor ? `/console/w/${ws}/flows${qs({ cursor: page.nextCursor })}` : null} />
        <h2>Installed from other workspaces</h2>
        {noticeOf(c)}
        <form method="post" action={`/console/w/${ws}/installations`} class="filters">
          <Csrf token={c.get('csrf')} />
          <label>
            Source workspace
            <input name="sourceWorkspaceId" required maxlength={63} />
          </label>
          <label>
            Public flow
            <input name="flowSlug" required maxlength={128} />
          </label>
          <label>
            Pin version (empty: track the latest)
            <input name="pinnedVersion" inputmode="numeric" pattern="[0-9]*" maxlength={10} />
          </label>
          <button type="submit" class="secondary">
            Install
          </button>
        </form>
        {installations.length === 0 ? (
          <Empty>
            No installations. Install a public flow of another workspace with POST …/installations.
          </Empty>
        ) : (
          <Table columns={['Installation', 'Flow', 'Version', 'Enabled', 'Action']}>
            {installations.map((i) => (
              <tr>
                <td class="mono">
                  <a href={`/console/w/${ws}/installations/${i.installationId}`}>{i.installationId}</a>
                </td>
                <td>
                  {i.sourceWorkspaceId}/{i.flowSlug}
                </td>
                <td>{i.pinnedVersion !== null ? `pinned v${i.pinnedVersion}` : i.versionPolicy}</td>
                <td>{i.enabled ? 'yes' : 'no'}</td>
                <td>
                  <form
                    method="post"
                    action={`/console/w/${ws}/installations/${i.installationId}`}
                    class="inline"
                  >
                    <Csrf token={c.get('csrf')} />
                    <input type="hidden" name="enabled" value={i.enabled ? 'false' : 'true'} />
                    <button
                      type="submit"
                      class={i.enabled ? 'danger' : 'secondary'}
                      aria-label={`${i.enabled ? 'Disable' : 'Enable'} installation ${i.installationId}`}
                    >
                      {i.enabled ? 'Disable' : 'Enable'}
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </>,
    );
  });
  const installationFailed = (c: C, answer: ApiAnswer) =>
    render(
      c,
      frameOf(c, 'Flows', c.req.param('ws') ?? null, 'flows'),
      <>
        <h1>Flows</h1>
        <Notice kind="error">{message(answer)}</Notice>
        <p>
          <a href={`/console/w/${c.req.param('ws')}/flows`}>Back to flows</a>
        </p>
      </>,
      answer.status >= 400 ? answer.status : 500,
    );
  console_.post('/console/w/:ws/installations', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const pinned = formText(form, 'pinnedVersion');
    const answer = await api(c, 'POST', wsPath(c, '/installations'), {
      sourceWorkspaceId: formText(form, 'sourceWorkspaceId'),
      flowSlug: formText(form, 'flowSlug'),
      ...(pinned
        ? { versionPolicy: 'pinned', pinnedVersion: Number(pinned) }
        : { versionPolicy: 'track-latest' }),
    });
    if (answer.status !== 201) return installationFailed(c, answer);
    return c.redirect(`/console/w/${c.req.param('ws')}/flows?done=installed`, 303);
  });
  console_.post('/console/w/:ws/installations/:id', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const enabled = formText(form, 'enabled') === 'true';
    const id = encodeURIComponent(c.req.param('id'));
    const answer = await api(c, 'PATCH', wsPath(c, `/installations/${id}`), { enabled });
    if (answer.status !== 200) return installationFailed(c, answer);
    return c.redirect(
      `/console/w/${c.req.param('ws')}/flows?done=inst-${enabled ? 'enabled' : 'disabled'}`,
      303,
    );
  });
  /** One installation, found by walking the admin API's list (it has no single-installation read). */
  const findInstallation = async (c: C, id: string): Promise<Installation | ApiAnswer | null> => {
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const answer = await api(c, 'GET', wsPath(c, `/installations${qs({ limit: 200, cursor })}`));
      if (answer.status !== 200) return answer;
      const page = answer.body as { items: Installation[]; nextCursor: string | null };
      const found = page.items.find((x) => x.installationId === id);
      if (found) return found;
      if (!page.nextCursor) return null;
      cursor = page.nextCursor;
    }
    return null;
  };
  const installationPage = async (c: C, error?: ApiAnswer) => {
    const ws = c.req.param('ws') as string;
    const id = c.req.param('id') as string;
    const [found, connectionsAnswer, textAnswer] = await Promise.all([
      findInstallation(c, id),
      api(c, 'GET', wsPath(c, '/connections?limit=200')),
      api(c, 'GET', wsPath(c, `/console/installations/${encodeURIComponent(id)}/text`)),
    ]);
    const runsText =
      textAnswer.status === 200
        ? (textAnswer.body as { version: number | null; literal: string | null; trusted: boolean })
        : null;
    if (found === null)
      return failed(c, 'Installation', 'flows', { status: 404, body: { message: 'installation not found' } });
    if ('status' in found) return failed(c, 'Installation', 'flows', found);
    const inst = found;
    // Offer to stop when the text it runs is trusted, or when it cannot run (nothing to re-pin) with the flag on.
    const trustShown = runsText?.trusted === true || (runsText?.literal == null && inst.trustMetadata);
    const connections =
      connectionsAnswer.status === 200 ? (connectionsAnswer.body as { items: Connection[] }).items : [];
    const nameOf = (connectionId: string) =>
      connections.find((x) => x.connectionId === connectionId)?.name ?? connectionId;
    const csrf = c.get('csrf');
    const base = `/console/w/${ws}/installations/${inst.installationId}`;
    const bound = Object.entries(inst.slotBindings);
    return render(
      c,
      frameOf(c, `Installation ${inst.installationId}`, ws, 'flows'),
      <>
        <h1>
          {inst.sourceWorkspaceId}/{inst.flowSlug} <span class="muted mono">{inst.installationId}</span>
        </h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{message(error)}</Notice> : null}
        <p>
          Version:{' '}
          <strong>
            {inst.versionPolicy === 'pinned' ? `pinned v${inst.pinnedVersion}` : 'tracks the latest'}
          </strong>{' '}
          · Enabled: <strong>{inst.enabled ? 'yes' : 'no'}</strong>
        </p>
        <h2>Version</h2>
        <form method="post" action={`${base}/version`} class="filters">
          <Csrf token={csrf} />
          <label>
            Pin version (empty: track the latest)
            <input
              name="pinnedVersion"
              inputmode="numeric"
              pattern="[0-9]*"
              maxlength={10}
              value={inst.pinnedVersion === null ? '' : String(inst.pinnedVersion)}
            />
          </label>
          <button type="submit" class="secondary">
            Save version policy
          </button>
        </form>
        <h2>Slot bindings</h2>
        <p class="muted">
          Which of this workspace's connections fills each slot the installed flow requires.
        </p>
        {bound.length === 0 ? (
          <Empty>No slot is bound yet.</Empty>
        ) : (
          <Table columns={['Slot', 'Connection']}>
            {bound.map(([slot, connectionId]) => (
              <tr>
                <td class="mono">{slot}</td>
                <td>{nameOf(connectionId)}</td>
              </tr>
            ))}
          </Table>
        )}
        <BindSlotForm ws={ws} action={`${base}/bindings`} csrf={csrf} connections={connections} />
        <h2>Metadata trust</h2>
        {runsText?.literal == null ? (
          <p>
            {inst.trustMetadata
              ? 'Trusted, but this installation cannot run now (its source is no longer public or released): nothing for models to see.'
              : 'Nothing to review: this installation cannot run now (its source is no longer public or released).'}
          </p>
        ) : (
          <>
            <p>
              {runsText.trusted
                ? `Trusted: models see the text below (v${runsText.version}) as reviewed by you; another version is untrusted until you opt in again.`
                : inst.trustMetadata
                  ? `Untrusted for now: you opted in for another version; models see the text below (v${runsText.version}, the version this installation runs) only as untrusted data until you review it.`
                  : `Untrusted: models see this installed flow’s authored text only as untrusted data. Opting in trusts exactly the text below (v${runsText.version}, the version this installation runs).`}
            </p>
            <pre tabindex={0}>{runsText.literal}</pre>
          </>
        )}
        {runsText?.literal != null || inst.trustMetadata ? (
          // Opting in pins the version it runs now; with the flag on but another version reviewed, it re-pins.
          <form method="post" action={`${base}/trust`}>
            <Csrf token={csrf} />
            <input type="hidden" name="trust" value={trustShown ? 'false' : 'true'} />
            <button type="submit" class={trustShown ? 'danger' : 'secondary'}>
              {trustShown ? 'Stop trusting this text' : `Trust this text (v${runsText?.version})`}
            </button>
          </form>
        ) : null}
        <p>
          <a href={`/console/w/${ws}/flows`}>Back to flows</a>
        </p>
      </>,
      error ? (error.status >= 400 ? error.status : 500) : 200,
    );
  };
  console_.get('/console/w/:ws/installations/:id', (c) => installationPage(c));
  /** A PATCH of the installation through the admin API; its refusal is shown on the installation's page. */
  const patchInstallation = async (c: C, body: Record<string, unknown>, done: string) => {
    const id = encodeURIComponent(c.req.param('id') ?? '');
    const answer = await api(c, 'PATCH', wsPath(c, `/installations/${id}`), body);
    if (answer.status === 403) return failed(c, 'Installation', 'flows', answer);
    if (answer.status !== 200) return installationPage(c, answer);
    return c.redirect(`/console/w/${c.req.param('ws')}/installations/${id}?done=${done}`, 303);
  };
  console_.post('/console/w/:ws/installations/:id/bindings', async (c) => {
    const form = await c.req.parseBody({ all: true });
    return patchInstallation(
      c,
      { slotBindings: { [formText(form, 'slot')]: formText(form, 'connectionId') } },
      'inst-bound',
    );
  });
  console_.post('/console/w/:ws/installations/:id/trust', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const trusted = formText(form, 'trust') === 'true';
    return patchInstallation(c, { trustMetadata: trusted }, trusted ? 'inst-trusted' : 'inst-untrusted');
  });
  console_.post('/console/w/:ws/installations/:id/version', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const pinned = formText(form, 'pinnedVersion');
    return patchInstallation(
      c,
      pinned ? { versionPolicy: 'pinned', pinnedVersion: Number(pinned) } : { versionPolicy: 'track-latest' },
      'inst-version',
    );
  });
  const flowPage = async (c: C, error?: string) => {
    const ws = c.req.param('ws') as string;
    const slug = c.req.param('slug') as string;
    const answer = await api(c, 'GET', wsPath(c, `/flows/${encodeURIComponent(slug)}`));
    if (answer.status !== 200) return failed(c, 'Flow', 'flows', answer);
    const flow = answer.body as FlowDetail;
    const csrf = c.get('csrf');
    const from = c.req.query('from');
    const to = c.req.query('to');
    const [liveText, connectionsAnswer] = await Promise.all([
      api(c, 'GET', wsPath(c, `/console/flows/${encodeURIComponent(slug)}/live-text`)),
      api(c, 'GET', wsPath(c, '/connections?limit=200')),
    ]);
    const connections =
      connectionsAnswer.status === 200 ? (connectionsAnswer.body as { items: Connection[] }).items : [];
    const trust =
      liveText.status === 200
        ? (liveText.body as { version: number | null; literal: string | null; trusted: boolean })
        : null;
    const diff =
      from && to
        ? await api(c, 'GET', wsPath(c, `/console/flows/${encodeURIComponent(slug)}/diff${qs({ from, to })}`))
        : null;
    const releaseForm = (version: number | null, label: string, danger = false) => (
      <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/release`} class="inline">
        <Csrf token={csrf} />
        {version !== null ? <input type="hidden" name="version" value={String(version)} /> : null}
        <button type="submit" class={danger ? 'danger' : 'secondary'}>
          {label}
        </button>
      </form>
    );
    return render(
      c,
      frameOf(c, `Flow ${flow.flowSlug}`, ws, 'flows'),
      <>
        <h1>
          {flow.name} <span class="muted mono">{flow.flowSlug}</span>
        </h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{error}</Notice> : null}
        <p>{flow.description ?? ''}</p>
        <p>
          Live: <strong>{flow.liveVersion === null ? 'not released' : `v${flow.liveVersion}`}</strong>
          {flow.tags.length > 0 ? <span class="muted"> · tags {flow.tags.join(', ')}</span> : null}
        </p>
        {flow.hasDraft ? (
          <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/release`} class="stack">
            <Csrf token={csrf} />
            <label>
              Release note
              <input name="releaseNote" maxlength={2000} />
            </label>
            <button type="submit">Release the draft</button>
          </form>
        ) : null}
        <h2>Versions</h2>
        {flow.versions.length === 0 ? (
          <Empty>No released versions yet; release the draft to make the flow live.</Empty>
        ) : (
          <Table columns={['Version', 'Released', 'Note', 'Action']}>
            {flow.versions.map((v) => (
              <tr>
                <td>
                  v{v.version} {v.version === flow.liveVersion ? <Badge value="live" /> : null}
                </td>
                <td>{when(v.createdAt)}</td>
                <td>{v.releaseNote ?? '—'}</td>
                <td>
                  {v.version === flow.liveVersion
                    ? null
                    : releaseForm(
                        v.version,
                        flow.liveVersion !== null && v.version < flow.liveVersion
                          ? `Roll back to v${v.version}`
                          : `Make v${v.version} live`,
                        flow.liveVersion !== null && v.version < flow.liveVersion,
                      )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        {flow.versions.length > 1 ? (
          <>
            <h2>Compare versions</h2>
            <form method="get" action={`/console/w/${ws}/flows/${flow.flowSlug}`} class="filters">
              {(['from', 'to'] as const).map((side, k) => (
                <label>
                  {side === 'from' ? 'From' : 'To'}
                  <select name={side}>
                    {flow.versions.map((v) => (
                      <option
                        value={String(v.version)}
                        selected={
                          (side === 'from' ? from : to) === String(v.version) ||
                          ((side === 'from' ? from : to) === undefined &&
                            v === flow.versions[k === 0 ? 1 : 0])
                        }
                      >
                        v{v.version}
                      </option>
                    ))}
                  </select>
                </label>
              ))}
              <button type="submit" class="secondary">
                Show diff
              </button>
            </form>
            {diff && diff.status !== 200 ? <Notice kind="error">{message(diff)}</Notice> : null}
            {diff && diff.status === 200 ? (
              <pre tabindex={0}>{(diff.body as { patch: string }).patch}</pre>
            ) : null}
          </>
        ) : null}
        <h2>Metadata trust</h2>
        {trust?.literal == null ? (
          <Empty>
            Nothing to review yet: release a version first. Its text is untrusted until you opt in here.
          </Empty>
        ) : (
          <>
            <p>
              {trust.trusted
                ? `Trusted: models see the text below (v${trust.version}) as written by you.`
                : `Untrusted: models see this flow's authored text only as untrusted data. Opting in trusts exactly the text below (v${trust.version}); a later release is untrusted again until reviewed.`}
            </p>
            <pre tabindex={0}>{trust.literal}</pre>
            <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/trust`}>
              <Csrf token={csrf} />
              <input type="hidden" name="trust" value={trust.trusted ? 'false' : 'true'} />
              <button type="submit" class={trust.trusted ? 'danger' : 'secondary'}>
                {trust.trusted ? 'Stop trusting this text' : `Trust this text (v${trust.version})`}
              </button>
            </form>
          </>
        )}
        <h2>Bindings</h2>
        <p class="muted">
          Which connection fills each slot the flow requires, for live runs and for draft runs.
        </p>
        <Json value={flow.bindings} />
        <BindSlotForm
          ws={ws}
          action={`/console/w/${ws}/flows/${flow.flowSlug}/bindings`}
          csrf={csrf}
          connections={connections}
        >
          <label>
            For
            <select name="target">
              <option value="live">live</option>
              <option value="draft">draft</option>
            </select>
          </label>
        </BindSlotForm>
      </>,
      error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/flows/:slug', (c) => flowPage(c));
  console_.post('/console/w/:ws/flows/:slug/bindings', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const slug = c.req.param('slug');
    const answer = await api(c, 'PUT', wsPath(c, `/flows/${encodeURIComponent(slug)}/bindings`), {
      target: formText(form, 'target') || 'live',
      slots: { [formText(form, 'slot')]: formText(form, 'connectionId') },
    });
    if (answer.status === 403) return failed(c, 'Flow', 'flows', answer);
    if (answer.status !== 200) return flowPage(c, message(answer));
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${encodeURIComponent(slug)}?done=bound`, 303);
  });
  console_.post('/console/w/:ws/flows/:slug/trust', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const trusted = formText(form, 'trust') === 'true';
    const slug = c.req.param('slug');
    const answer = await api(c, 'PATCH', wsPath(c, `/flows/${encodeURIComponent(slug)}`), {
      trustMetadata: trusted,
    });
    if (answer.status === 403) return failed(c, 'Flow', 'flows', answer);
    if (answer.status !== 200) return flowPage(c, message(answer));
    const done = trusted ? 'trusted' : 'untrusted';
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${encodeURIComponent(slug)}?done=${done}`, 303);
  });
  console_.post('/console/w/:ws/flows/:slug/release', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const version = formText(form, 'version');
    const note = formText(form, 'releaseNote');
    const slug = c.req.param('slug');
    const answer = await api(c, 'POST', wsPath(c, `/flows/${encodeURIComponent(slug)}/release`), {
      ...(version ? { version: Number(version) } : {}),
      ...(note ? { releaseNote: note } : {}),
    });
    if (answer.status === 403) return failed(c, 'Flow', 'flows', answer);
    if (answer.status !== 200) return flowPage(c, message(answer));
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${encodeURIComponent(slug)}?done=released`, 303);
  });
}
