/** @jsxImportSource hono/jsx */
import { CONNECTION_TYPES } from '@flowgate/core';
import { type Connection, type ConnectionCheck, formBody, refusal } from '../api.js';
import { type C, formText, frameOf, noticeOf, PAGE_SIZE, type PageKit, qs, render } from '../kit.js';
import { Badge, Csrf, Empty, Notice, Pager, Table, when } from '../views.js';

/**
 * An mcp-server's fixed headers from the form: one `Name: value` per line. A line without a colon is kept under its
 * whole text as a name, so the API's rules answer it (not a header name) instead of it vanishing.
 */
function headerLines(text: string): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const colon = line.indexOf(':');
    const name = (colon < 0 ? line : line.slice(0, colon)).trim();
    headers[name] = colon < 0 ? '' : line.slice(colon + 1).trim();
  }
  return headers;
}

/** Connections: health, create, rotate, check, disable. */
export function installConnectionsPages(kit: PageKit): void {
  const { app: console_, api, wsParam, failed } = kit;
  const connections = (c: C) => api(c).api.workspaces[':ws'].connections;
  /** A refused change: a 403 is the whole page's answer, anything else is shown above the list. */
  const refused = async (c: C, res: Response) => {
    const r = await refusal(res);
    return r.status === 403
      ? failed(c, 'Connections', 'connections', r)
      : connectionsPage(c, { error: r.message });
  };
  const connectionsPage = async (
    c: C,
    extra: { error?: string; check?: ConnectionCheck & { name: string } },
  ) => {
    const ws = c.req.param('ws') as string;
    const cursor = c.req.query('cursor') || undefined;
    const res = await connections(c).$get({ param: wsParam(c), query: { limit: String(PAGE_SIZE), cursor } });
    if (!res.ok) return failed(c, 'Connections', 'connections', await refusal(res));
    const page = await res.json();
    const csrf = c.get('csrf');
    const health = (x: Connection) => {
      if (x.status === 'disabled') return <Badge value="disabled" />;
      if (!x.health) return <span class="muted">not checked</span>;
      const mcp = x.health.mcp;
      return (
        <>
          <Badge value={x.health.ok ? 'healthy' : 'unhealthy'} />{' '}
          <span class="muted">
            {x.health.status ? `HTTP ${x.health.status} · ` : ''}
            {when(x.health.checkedAt)}
          </span>
          {mcp ? (
            <div class="muted">
              MCP {mcp.protocolVersion} · {mcp.serverName}
              {mcp.serverVersion ? ` ${mcp.serverVersion}` : ''} · {mcp.toolCount} tools
            </div>
          ) : null}
        </>
      );
    };
    return render(
      c,
      frameOf(c, 'Connections', ws, 'connections'),
      <>
        <h1>Connections</h1>
        {noticeOf(c)}
        {extra.error ? <Notice kind="error">{extra.error}</Notice> : null}
        {extra.check ? (
          <Notice kind={extra.check.status === 'healthy' ? 'info' : 'error'}>
            {extra.check.name}: {extra.check.status}
            {extra.check.httpStatus !== null ? ` (HTTP ${extra.check.httpStatus})` : ''}
            {extra.check.latencyMs !== null ? ` in ${extra.check.latencyMs} ms` : ''}
            {extra.check.message ? ` — ${extra.check.message}` : ''}
            {extra.check.mcp
              ? ` — MCP ${extra.check.mcp.protocolVersion}, ${extra.check.mcp.serverName}, ${extra.check.mcp.toolCount} tools`
              : ''}
          </Notice>
        ) : null}
        {page.items.length === 0 ? (
          <Empty>
            No connections yet. Create one below for each API your flows call; flows bind to them by slot.
          </Empty>
        ) : (
          <Table columns={['Name', 'Type', 'Base URL', 'Auth', 'Health', 'Actions']}>
            {page.items.map((x) => (
              <tr>
                <td>
                  {x.name}
                  <div class="muted mono">{x.connectionId}</div>
                </td>
                <td>
                  {x.type}
                  {x.model ? <div class="muted">{x.model}</div> : null}
                </td>
                <td class="mono">{x.baseUrl ?? '—'}</td>
                <td>
                  {x.auth.type}
                  {x.auth.headerName ? ` (${x.auth.headerName})` : ''}
                  {x.fixedHeaderNames?.length ? (
                    <div class="muted">headers: {x.fixedHeaderNames.join(', ')}</div>
                  ) : null}
                </td>
                <td>{health(x)}</td>
                <td>
                  <form
                    method="post"
                    action={`/console/w/${ws}/connections/${x.connectionId}/check`}
                    class="inline"
                  >
                    <Csrf token={csrf} />
                    <button type="submit" class="secondary" aria-label={`Check ${x.name}`}>
                      Check
                    </button>
                  </form>{' '}
                  <form
                    method="post"
                    action={`/console/w/${ws}/connections/${x.connectionId}/${x.status === 'active' ? 'disable' : 'enable'}`}
                    class="inline"
                  >
                    <Csrf token={csrf} />
                    <button
                      type="submit"
                      class={x.status === 'active' ? 'danger' : 'secondary'}
                      aria-label={`${x.status === 'active' ? 'Disable' : 'Enable'} ${x.name}`}
                    >
                      {x.status === 'active' ? 'Disable' : 'Enable'}
                    </button>
                  </form>
                  {x.auth.type !== 'none' ? (
                    <form
                      method="post"
                      action={`/console/w/${ws}/connections/${x.connectionId}/rotate`}
                      class="stack"
                    >
                      <Csrf token={csrf} />
                      <label>
                        New secret for {x.name}
                        <input type="password" name="secret" autocomplete="off" required />
                      </label>
                      <button type="submit" class="secondary">
                        Rotate
                      </button>
                    </form>
                  ) : null}
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pager
          next={page.nextCursor ? `/console/w/${ws}/connections${qs({ cursor: page.nextCursor })}` : null}
        />
        <h2>Create a connection</h2>
        <form method="post" action={`/console/w/${ws}/connections`} class="stack">
          <Csrf token={csrf} />
          <label>
            Name
            <input name="name" required maxlength={100} />
          </label>
          <label>
            Type
            <select name="type">
              {CONNECTION_TYPES.map((t) => (
                <option value={t}>{t}</option>
              ))}
            </select>
          </label>
          <label>
            Base URL (no credentials in it)
            <input name="baseUrl" type="url" maxlength={2048} />
          </label>
          <label>
            Model (llm-provider only)
            <input name="model" maxlength={200} />
          </label>
          <label>
            Authentication
            <select name="authType">
              <option value="none">none</option>
              <option value="bearer">bearer</option>
              <option value="api-key">api-key</option>
              <option value="basic">basic (user:password; not for mcp-server)</option>
            </select>
          </label>
          <label>
            Header name (api-key only)
            <input name="headerName" placeholder="X-API-Key" maxlength={64} />
          </label>
          <label>
            Secret (stored encrypted, never shown again)
            <input name="secret" type="password" autocomplete="off" />
          </label>
          <label>
            Fixed headers (mcp-server only; one "Name: value" per line; not secret: stored and shown in plain
            text)
            <textarea name="headers" rows={2} maxlength={21000} placeholder="X-Tenant: acme"></textarea>
          </label>
          <button type="submit">Create connection</button>
        </form>
      </>,
      extra.error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/connections', (c) => connectionsPage(c, {}));
  console_.post('/console/w/:ws/connections', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const authType = formText(form, 'authType');
    const secret = formText(form, 'secret');
    const headerName = formText(form, 'headerName');
    const auth =
      authType === 'none' || authType === ''
        ? { type: 'none' }
        : { type: authType, secret, ...(authType === 'api-key' && headerName ? { headerName } : {}) };
    const baseUrl = formText(form, 'baseUrl');
    const model = formText(form, 'model');
    const headers = headerLines(formText(form, 'headers'));
    const res = await connections(c).$post({
      param: wsParam(c),
      json: formBody({
        name: formText(form, 'name'),
        type: formText(form, 'type'),
        ...(baseUrl ? { baseUrl } : {}),
        ...(model ? { model } : {}),
        auth,
        ...(Object.keys(headers).length ? { headers } : {}),
      }),
    });
    if (!res.ok) return refused(c, res);
    return c.redirect(`/console/w/${c.req.param('ws')}/connections?done=conn-created`, 303);
  });
  console_.post('/console/w/:ws/connections/:id/:action', async (c) => {
    const param = { ...wsParam(c), id: encodeURIComponent(c.req.param('id')) };
    const connection = connections(c)[':id'];
    const action = c.req.param('action');
    if (action === 'rotate') {
      const form = await c.req.parseBody({ all: true });
      const res = await connection.rotate.$post({ param, json: { secret: formText(form, 'secret') } });
      if (!res.ok) return refused(c, res);
      return c.redirect(`/console/w/${c.req.param('ws')}/connections?done=conn-rotated`, 303);
    }
    if (action === 'disable' || action === 'enable') {
      const res = await connection[action].$post({ param });
      if (!res.ok) return refused(c, res);
      return c.redirect(`/console/w/${c.req.param('ws')}/connections?done=conn-${action}d`, 303);
    }
    if (action === 'check') {
      const res = await connection.check.$post({ param });
      if (!res.ok) return refused(c, res);
      return connectionsPage(c, { check: await res.json() });
    }
    return c.text('not found', 404);
  });
}
