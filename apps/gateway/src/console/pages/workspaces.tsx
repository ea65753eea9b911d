/** @jsxImportSource hono/jsx */
import { type Refusal, refusal } from '../api.js';
import { type C, formText, frameOf, noticeOf, PAGE_SIZE, type PageKit, qs, render } from '../kit.js';
import { Csrf, Empty, Notice, Pager, Table, when } from '../views.js';

/** The operator's workspaces page. */
export function installWorkspacesPage(kit: PageKit): void {
  const { app: console_, api, failed } = kit;
  const workspacesPage = async (c: C, error?: Refusal, form?: { id: string; name: string }) => {
    const after = c.req.query('after') || undefined;
    const res = await api(c).api.admin.workspaces.$get({
      query: { limit: String(PAGE_SIZE), cursor: after },
    });
    if (!res.ok) return failed(c, 'Workspaces', 'workspaces', await refusal(res));
    const { items, nextCursor: next } = await res.json();
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
          <Table columns={['Id', 'Name', 'Created']}>
            {items.map((w) => (
              <tr>
                <td>
                  <a href={`/console/w/${w.id}/keys`}>{w.id}</a>
                </td>
                <td>{w.name}</td>
                <td>{when(w.createdAt)}</td>
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
