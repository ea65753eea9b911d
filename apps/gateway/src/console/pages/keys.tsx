/** @jsxImportSource hono/jsx */
import { CAPABILITIES } from '@flowgate/auth';
import { formBody, refusal } from '../api.js';
import { type C, formText, frameOf, noticeOf, PAGE_SIZE, type PageKit, qs, render } from '../kit.js';
import { Badge, Csrf, Empty, Notice, Pager, when } from '../views.js';

/** Service accounts and their keys. */
export function installKeysPages(kit: PageKit): void {
  const { app: console_, api, wsParam, failed } = kit;
  const accounts = (c: C) => api(c).api.workspaces[':ws']['service-accounts'];
  /** A refused change: a 403 is the whole page's answer, anything else is shown above the keys. */
  const refused = async (c: C, res: Response) => {
    const r = await refusal(res);
    return r.status === 403
      ? failed(c, 'Service accounts & keys', 'keys', r)
      : keysPage(c, { error: r.message });
  };
  const keysPage = async (
    c: C,
    extra: { created?: { name: string; apiKey: string; keyId: string }; error?: string },
  ) => {
    const cursor = c.req.query('cursor') || undefined;
    const res = await accounts(c).$get({
      param: wsParam(c),
      query: { limit: String(PAGE_SIZE), cursor },
    });
    if (!res.ok) return failed(c, 'Service accounts & keys', 'keys', await refusal(res));
    const page = await res.json();
    const keys = await Promise.all(
      page.items.map(async (sa) => {
        const k = await accounts(c)[':sa'].keys.$get({
          param: { ...wsParam(c), sa: encodeURIComponent(sa.serviceAccountId) },
        });
        return k.ok ? (await k.json()).items : [];
      }),
    );
    const ws = c.req.param('ws') as string;
    const csrf = c.get('csrf');
    return render(
      c,
      frameOf(c, 'Service accounts & keys', ws, 'keys'),
      <>
        <h1>Service accounts &amp; keys</h1>
        {noticeOf(c)}
        {extra.error ? <Notice kind="error">{extra.error}</Notice> : null}
        {extra.created ? (
          <section class="notice" aria-labelledby="new-key">
            <h2 id="new-key">New key for {extra.created.name}</h2>
            <p>
              Copy it now: it is shown this once and never again (only its hash is stored). Agents send it as{' '}
              <code>Authorization: Bearer …</code>.
            </p>
            <div class="secret">
              <label for="new-key-value" class="muted">
                API key {extra.created.keyId}
              </label>
              <input id="new-key-value" readonly value={extra.created.apiKey} />
              <button type="button" data-copy="new-key-value">
                Copy
              </button>
            </div>
          </section>
        ) : null}
        <h2>Create a service account</h2>
        <form method="post" action={`/console/w/${ws}/service-accounts`} class="stack">
          <Csrf token={csrf} />
          <label>
            Name
            <input name="name" required maxlength={100} />
          </label>
          <fieldset>
            <legend>Capabilities</legend>
            {CAPABILITIES.map((cap) => (
              <label class="check">
                <input type="checkbox" name="capabilities" value={cap} checked={cap === 'flows.read'} /> {cap}
              </label>
            ))}
          </fieldset>
          <button type="submit">Create service account</button>
        </form>
        <h2>Service accounts</h2>
        {page.items.length === 0 ? (
          <Empty>No service accounts yet. Create one above, then a key for each agent that connects.</Empty>
        ) : (
          page.items.map((sa, i) => (
            <section aria-labelledby={`sa-${sa.serviceAccountId}`}>
              <h3 id={`sa-${sa.serviceAccountId}`}>
                {sa.name} <Badge value={sa.status} /> <span class="muted mono">{sa.serviceAccountId}</span>
              </h3>
              <p class="muted">Capabilities: {sa.capabilities.join(', ') || 'none'}</p>
              <form
                method="post"
                action={`/console/w/${ws}/service-accounts/${sa.serviceAccountId}/keys`}
                class="inline"
              >
                <Csrf token={csrf} />
                <label class="stacked">
                  Key name
                  <input name="name" maxlength={100} placeholder="optional" />
                </label>{' '}
                <label class="stacked">
                  Expires (UTC, optional)
                  <input name="expiresOn" type="date" />
                </label>{' '}
                <button type="submit">Create key</button>
              </form>{' '}
              <form
                method="post"
                action={`/console/w/${ws}/service-accounts/${sa.serviceAccountId}/${sa.status === 'active' ? 'disable' : 'enable'}`}
                class="inline"
              >
                <Csrf token={csrf} />
                <button type="submit" class={sa.status === 'active' ? 'danger' : 'secondary'}>
                  {sa.status === 'active' ? `Disable ${sa.name}` : `Enable ${sa.name}`}
                </button>
              </form>
              {(keys[i] ?? []).length === 0 ? (
                <Empty>No keys. Create one to let an agent connect as {sa.name}.</Empty>
              ) : (
                <div class="scroll" tabindex={0}>
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Key</th>
                        <th scope="col">Name</th>
                        <th scope="col">Created</th>
                        <th scope="col">Last used</th>
                        <th scope="col">Expires</th>
                        <th scope="col">Status</th>
                        <th scope="col">
                          <span class="muted">Action</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {(keys[i] ?? []).map((k) => (
                        <tr>
                          <td class="mono">{k.keyId}</td>
                          <td>{k.name ?? '—'}</td>
                          <td>{when(k.createdAt)}</td>
                          <td>{when(k.lastUsedAt)}</td>
                          <td>{k.expiresAt ? when(k.expiresAt) : 'never'}</td>
                          <td>
                            <Badge value={k.revokedAt ? 'revoked' : 'active'} />
                          </td>
                          <td>
                            {k.revokedAt ? null : (
                              <form
                                method="post"
                                action={`/console/w/${ws}/service-accounts/${sa.serviceAccountId}/keys/${k.keyId}/revoke`}
                                class="inline"
                              >
                                <Csrf token={csrf} />
                                <button type="submit" class="danger" aria-label={`Revoke key ${k.keyId}`}>
                                  Revoke
                                </button>
                              </form>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
          ))
        )}
        <Pager next={page.nextCursor ? `/console/w/${ws}/keys${qs({ cursor: page.nextCursor })}` : null} />
      </>,
      extra.error ? 400 : 200,
    );
  };

  console_.get('/console/w/:ws/keys', (c) => keysPage(c, {}));
  console_.post('/console/w/:ws/service-accounts', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const caps = form.capabilities;
    const capabilities = (Array.isArray(caps) ? caps : caps ? [caps] : []).filter(
      (x) => typeof x === 'string',
    );
    const res = await accounts(c).$post({
      param: wsParam(c),
      json: formBody({ name: formText(form, 'name'), capabilities }),
    });
    if (!res.ok) return refused(c, res);
    return c.redirect(`/console/w/${c.req.param('ws')}/keys?done=sa-created`, 303);
  });
  console_.post('/console/w/:ws/service-accounts/:sa/keys', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const name = formText(form, 'name');
    const expiresOn = formText(form, 'expiresOn');
    const sa = c.req.param('sa');
    const res = await accounts(c)[':sa'].keys.$post({
      param: { ...wsParam(c), sa: encodeURIComponent(sa) },
      json: {
        ...(name ? { name } : {}),
        ...(/^\d{4}-\d{2}-\d{2}$/.test(expiresOn) ? { expiresAt: `${expiresOn}T00:00:00Z` } : {}),
      },
    });
    if (!res.ok) return refused(c, res);
    const created = await res.json();
    return keysPage(c, {
      created: { name: name || sa, apiKey: created.key.apiKey, keyId: created.key.keyId },
    });
  });
  console_.post('/console/w/:ws/service-accounts/:sa/keys/:keyId/revoke', async (c) => {
    const res = await accounts(c)[':sa'].keys[':keyId'].$delete({
      param: {
        ...wsParam(c),
        sa: encodeURIComponent(c.req.param('sa')),
        keyId: encodeURIComponent(c.req.param('keyId')),
      },
    });
    if (!res.ok) return refused(c, res);
    return c.redirect(`/console/w/${c.req.param('ws')}/keys?done=key-revoked`, 303);
  });
  for (const action of ['disable', 'enable'] as const) {
    console_.post(`/console/w/:ws/service-accounts/:sa/${action}`, async (c) => {
      const res = await accounts(c)[':sa'].$patch({
        param: { ...wsParam(c), sa: encodeURIComponent(c.req.param('sa') ?? '') },
        json: { status: action === 'disable' ? 'disabled' : 'active' },
      });
      if (!res.ok) return refused(c, res);
      return c.redirect(`/console/w/${c.req.param('ws')}/keys?done=sa-${action}d`, 303);
    });
  }
}
