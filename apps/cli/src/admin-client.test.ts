import { describe, expect, it } from 'vitest';
import { AdminApiError, AdminClient } from './admin-client.js';
import { startLoopback } from './testing.js';

// Transport failures the real gateway cannot be made to produce; the admin commands' behaviour against the real
// gateway is covered by program.test.ts and flows-commands.test.ts.
describe('AdminClient transport failures', () => {
  it('a server that never answers is "unavailable (timed out)" after the timeout', async () => {
    const hung = await startLoopback(() => {});
    try {
      const client = new AdminClient({ apiUrl: hung.url, token: 't', timeoutMs: 200 });
      const error = await client.listServiceAccounts('ws-acme').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AdminApiError);
      expect(error).toMatchObject({
        code: 'unavailable',
        status: 0,
        message: `cannot reach the Flowgate API at ${hung.url} (timed out)`,
      });
    } finally {
      await hung.close();
    }
  });

  it('a success answer that is not JSON is "invalid_response", naming the request', async () => {
    const html = await startLoopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>sign in</html>');
    });
    try {
      const client = new AdminClient({ apiUrl: `${html.url}/`, token: 't' });
      await expect(client.createWorkspace({ id: 'ws-acme', name: 'Acme' })).rejects.toMatchObject({
        code: 'invalid_response',
        message: 'POST /api/admin/workspaces answered 200 without JSON',
      });
    } finally {
      await html.close();
    }
  });
});
