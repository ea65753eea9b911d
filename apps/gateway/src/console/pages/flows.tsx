/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx';
import {
  type Connection,
  formBody,
  type Installation,
  type InstallationPatch,
  type Refusal,
  refusal,
} from '../api.js';
import { type C, formText, frameOf, noticeOf, PAGE_SIZE, type PageKit, qs, render } from '../kit.js';
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
  const { app: console_, api, wsParam, failed } = kit;
  const workspace = (c: C) => api(c).api.workspaces[':ws'];
  const flowParam = (c: C) => ({ ...wsParam(c), slug: encodeURIComponent(c.req.param('slug') ?? '') });
  const installationParam = (c: C) => ({ ...wsParam(c), id: encodeURIComponent(c.req.param('id') ?? '') });
  /** This workspace's connections (the first 200), to bind slots to; none when they cannot be read. */
  const connectionsOf = async (c: C): Promise<Connection[]> => {
    const res = await workspace(c).connections.$get({ param: wsParam(c), query: { limit: '200' } });
    return res.ok ? (await res.json()).items : [];
  };
  console_.get('/console/w/:ws/flows', async (c) => {
    const ws = c.req.param('ws') as string;
    const cursor = c.req.query('cursor') || undefined;
    const [res, installed] = await Promise.all([
      workspace(c).flows.$get({ param: wsParam(c), query: { limit: String(PAGE_SIZE), cursor } }),
      workspace(c).installations.$get({ param: wsParam(c), query: { limit: String(PAGE_SIZE) } }),
    ]);
    if (!res.ok) return failed(c, 'Flows', 'flows', await refusal(res));
    const page = await res.json();
    const installations = installed.ok ? (await installed.json()).items : [];
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
  const installationFailed = (c: C, refused: Refusal) =>
    render(
      c,
      frameOf(c, 'Flows', c.req.param('ws') ?? null, 'flows'),
      <>
        <h1>Flows</h1>
        <Notice kind="error">{refused.message}</Notice>
        <p>
          <a href={`/console/w/${c.req.param('ws')}/flows`}>Back to flows</a>
        </p>
      </>,
      refused.status >= 400 ? refused.status : 500,
    );
  console_.post('/console/w/:ws/installations', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const pinned = formText(form, 'pinnedVersion');
    const res = await workspace(c).installations.$post({
      param: wsParam(c),
      json: {
        sourceWorkspaceId: formText(form, 'sourceWorkspaceId'),
        flowSlug: formText(form, 'flowSlug'),
        ...(pinned
          ? { versionPolicy: 'pinned' as const, pinnedVersion: Number(pinned) }
          : { versionPolicy: 'track-latest' as const }),
      },
    });
    if (!res.ok) return installationFailed(c, await refusal(res));
    return c.redirect(`/console/w/${c.req.param('ws')}/flows?done=installed`, 303);
  });
  console_.post('/console/w/:ws/installations/:id', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const enabled = formText(form, 'enabled') === 'true';
    const res = await workspace(c).installations[':id'].$patch({
      param: installationParam(c),
      json: { enabled },
    });
    if (!res.ok) return installationFailed(c, await refusal(res));
    return c.redirect(
      `/console/w/${c.req.param('ws')}/flows?done=inst-${enabled ? 'enabled' : 'disabled'}`,
      303,
    );
  });
  /** One installation, found by walking the admin API's list (it has no single-installation read). */
  const findInstallation = async (c: C, id: string): Promise<Installation | Refusal | null> => {
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const res = await workspace(c).installations.$get({
        param: wsParam(c),
        query: { limit: '200', cursor },
      });
      if (!res.ok) return refusal(res);
      const page = await res.json();
      const found = page.items.find((x) => x.installationId === id);
      if (found) return found;
      if (!page.nextCursor) return null;
      cursor = page.nextCursor;
    }
    return null;
  };
  const installationPage = async (c: C, error?: Refusal) => {
    const ws = c.req.param('ws') as string;
    const id = c.req.param('id') as string;
    const [found, connections, trustAnswer] = await Promise.all([
      findInstallation(c, id),
      connectionsOf(c),
      workspace(c).installations[':id'].trust.$get({ param: installationParam(c) }),
    ]);
    const runsText = trustAnswer.ok ? await trustAnswer.json() : null;
    if (found === null)
      return failed(c, 'Installation', 'flows', { status: 404, message: 'installation not found' });
    if ('status' in found) return failed(c, 'Installation', 'flows', found);
    const inst = found;
    // Offer to stop when the text it runs is trusted, or when it cannot run (nothing to re-pin) with the flag on.
    const trustShown = runsText?.trusted === true || (runsText?.literal == null && inst.trustMetadata);
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
        {error ? <Notice kind="error">{error.message}</Notice> : null}
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
  const patchInstallation = async (c: C, body: InstallationPatch, done: string) => {
    const param = installationParam(c);
    const res = await workspace(c).installations[':id'].$patch({ param, json: body });
    if (!res.ok) {
      const refused = await refusal(res);
      if (refused.status === 403) return failed(c, 'Installation', 'flows', refused);
      return installationPage(c, refused);
    }
    return c.redirect(`/console/w/${c.req.param('ws')}/installations/${param.id}?done=${done}`, 303);
  };
  console_.post('/console/w/:ws/installations/:id/bindings', async (c) => {
    const form = await c.req.parseBody({ all: true });
    return patchInstallation(
      c,
      formBody({ slotBindings: { [formText(form, 'slot')]: formText(form, 'connectionId') } }),
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
      pinned
        ? { versionPolicy: 'pinned' as const, pinnedVersion: Number(pinned) }
        : { versionPolicy: 'track-latest' as const },
      'inst-version',
    );
  });
  const flowPage = async (c: C, error?: string) => {
    const ws = c.req.param('ws') as string;
    const flowApi = workspace(c).flows[':slug'];
    const res = await flowApi.$get({ param: flowParam(c) });
    if (!res.ok) return failed(c, 'Flow', 'flows', await refusal(res));
    const flow = await res.json();
    const csrf = c.get('csrf');
    const from = c.req.query('from');
    const to = c.req.query('to');
    const [trustAnswer, connections] = await Promise.all([
      flowApi.trust.$get({ param: flowParam(c) }),
      connectionsOf(c),
    ]);
    const trust = trustAnswer.ok ? await trustAnswer.json() : null;
    const diffAnswer =
      from && to ? await flowApi.diff.$get({ param: flowParam(c), query: { from, to } }) : null;
    const diff = diffAnswer?.ok
      ? { patch: (await diffAnswer.json()).patch, refused: null }
      : { patch: null, refused: diffAnswer ? await refusal(diffAnswer) : null };
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
            {diff.refused ? <Notice kind="error">{diff.refused.message}</Notice> : null}
            {diff.patch !== null ? <pre tabindex={0}>{diff.patch}</pre> : null}
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
  /** A change of the flow; a 403 is the whole page's answer, any other refusal is shown on the flow's page. */
  const changed = async (c: C, res: Response, done: string) => {
    if (!res.ok) {
      const refused = await refusal(res);
      return refused.status === 403 ? failed(c, 'Flow', 'flows', refused) : flowPage(c, refused.message);
    }
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${flowParam(c).slug}?done=${done}`, 303);
  };
  console_.post('/console/w/:ws/flows/:slug/bindings', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const res = await workspace(c).flows[':slug'].bindings.$put({
      param: flowParam(c),
      json: formBody({
        target: formText(form, 'target') || 'live',
        slots: { [formText(form, 'slot')]: formText(form, 'connectionId') },
      }),
    });
    return changed(c, res, 'bound');
  });
  console_.post('/console/w/:ws/flows/:slug/trust', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const trusted = formText(form, 'trust') === 'true';
    const res = await workspace(c).flows[':slug'].$patch({
      param: flowParam(c),
      json: { trustMetadata: trusted },
    });
    return changed(c, res, trusted ? 'trusted' : 'untrusted');
  });
  console_.post('/console/w/:ws/flows/:slug/release', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const version = formText(form, 'version');
    const note = formText(form, 'releaseNote');
    const res = await workspace(c).flows[':slug'].release.$post({
      param: flowParam(c),
      json: {
        ...(version ? { version: Number(version) } : {}),
        ...(note ? { releaseNote: note } : {}),
      },
    });
    return changed(c, res, 'released');
  });
}
