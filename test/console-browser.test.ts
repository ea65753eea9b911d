import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXAMPLE_FLOWS } from '@flowgate/flows';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chromium, launchChromium, seriousAxeViolations } from './support/chromium.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { installFlow, type Loopback, startLoopback } from './support/runs.js';

/**
 * The admin console in a real browser (Debian's chromium, driven by playwright-core): sign in, manage keys, watch a
 * run, read the audit log, with hostile flow output rendered inert and an axe-core pass on every page visited.
 * Screenshots go to .tmp/console-screenshots.
 */

const WS = 'ws-console';
const SHOTS = join(process.cwd(), '.tmp', 'console-screenshots');
const HOSTILE =
  '<script>document.title="PWNED";parent.document.title="PWNED"</script><img src=x onerror="alert(1)">';
/** Flow-authored text (a description) with markup; EDN strings allow no double quotes inside. */
const HOSTILE_DESCRIPTION = "<script>document.title='PWNED'</script><img src=x onerror=alert(2)>";

let gw: TestGateway;
let api: Loopback;
let context: BrowserContext;
let page: Page;
let browser: Chromium;
const dialogs: string[] = [];
const axeFindings: string[] = [];

async function shot(name: string) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function axePass(label: string) {
  for (const v of await seriousAxeViolations(page)) axeFindings.push(`${label}: ${v}`);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // The stand-in sales API answers a region name that is a script: the example flow pastes it into its HTML.
  api = await startLoopback(() => ({
    status: 200,
    json: { rows: [{ region: HOSTILE, orders: 3, revenue: 120 }] },
  }));
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' });
  await gw.createWorkspace(WS);
  const sales = await gw.createConnection(WS, {
    name: 'sales',
    type: 'http-api',
    baseUrl: `${api.url}/sales`,
    auth: { type: 'none' },
  });
  const edn = (EXAMPLE_FLOWS['daily-report'] as string).replace(
    /:description "Fetches a day's sales figures and renders them as an HTML report\."/,
    `:description "${HOSTILE_DESCRIPTION}"`,
  );
  if (!edn.includes(HOSTILE_DESCRIPTION))
    throw new Error('the example flow changed; update the hostile description');
  await installFlow(gw, WS, 'daily-report', edn, { sales: sales.connectionId });
  browser = await launchChromium({ width: 360, height: 800 });
  context = browser.context;
  page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await api?.close();
});

describe('admin console in chromium', () => {
  let apiKey = '';
  let keyId = '';

  it('sends a page request without a session to sign-in, and signs in with the operator token', async () => {
    await page.goto(`${gw.url}/console/w/${WS}/keys`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await axePass('sign-in');
    await shot('01-sign-in');
    await page.getByLabel('Operator token or workspace-admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/workspaces$/);
    expect(await page.content()).not.toContain(ADMIN_TOKEN);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'fg_console');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    // Not readable from page script.
    expect(await page.evaluate(() => document.cookie)).not.toContain('fg_console');
    await page.getByRole('link', { name: WS }).click();
    await page.waitForURL(new RegExp(`/console/w/${WS}/keys$`));
    await axePass('keys');
  });

  it('creates an account and a key shown once, then revokes it and the MCP endpoint refuses it', async () => {
    await page.getByLabel('Name', { exact: true }).fill('browser-agent');
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.waitForURL(/done=sa-created/);
    await page.getByRole('button', { name: 'Create key' }).click();
    const field = page.locator('#new-key-value');
    await field.waitFor();
    apiKey = await field.inputValue();
    expect(apiKey).toMatch(/^fgk_/);
    await expect.poll(() => page.getByRole('button', { name: 'Copy' }).isVisible()).toBe(true);
    await shot('02-key-created');
    const mcp = (token: string) =>
      mcpPost(gw.mcpUrl(WS), {
        token,
        protocolVersion: '2025-11-25',
        body: rpc('tools/call', { name: 'get_workspace_context', arguments: {} }),
      });
    const ok = await mcp(apiKey);
    expect(ok.status).toBe(200);
    expect(asRpc(ok).error).toBeUndefined();
    // Shown once: a reload is a plain GET of the list, which never carries it.
    await page.goto(`${gw.url}/console/w/${WS}/keys`);
    expect(await page.content()).not.toContain(apiKey);
    const revoke = page.getByRole('button', { name: /^Revoke key / });
    keyId = ((await revoke.getAttribute('aria-label')) ?? '').replace('Revoke key ', '');
    expect(keyId.length).toBeGreaterThan(4);
    expect(apiKey).toContain(keyId);
    await revoke.click();
    await page.waitForURL(/done=key-revoked/);
    await expect.poll(() => page.getByText('revoked', { exact: true }).count()).toBe(1);
    await shot('03-key-revoked');
    expect((await mcp(apiKey)).status).toBe(401);
  });

  it('starts a run of an example flow and watches it complete, its HTML result inert in a sandboxed frame', async () => {
    await page.goto(`${gw.url}/console/w/${WS}/runs`);
    await axePass('runs-empty');
    await page.getByLabel('Input (JSON object)').fill('{}');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/runs\/[^/?]+\?done=run-started/, { timeout: 10_000 });
    // The page reloads itself every 2 s until the run ends.
    await page.locator('h1 .s-completed').waitFor({ timeout: 20_000 });
    const frame = page.locator('iframe.result');
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await page.locator('main script').count()).toBe(0);
    const inner = await (await frame.elementHandle())?.contentFrame();
    if (!inner) throw new Error('no result frame');
    await inner.waitForLoadState();
    // The flow's HTML is there, script element and all, but nothing in it ran.
    expect(await inner.locator('script').count()).toBe(1);
    expect(await inner.title()).toBe('');
    expect(await page.title()).not.toBe('PWNED');
    expect(dialogs).toEqual([]);
    const res = await page.request.get(`${new URL(page.url()).origin}${new URL(page.url()).pathname}/result`);
    expect(res.headers()['content-security-policy']).toContain('sandbox');
    expect(res.headers()['content-type']).toContain('text/html');
    await axePass('run');
    await shot('04-run-completed');
    await page.goto(`${gw.url}/console/w/${WS}/runs?status=completed&flow=daily-report`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.goto(`${gw.url}/console/w/${WS}/runs?status=failed`);
    expect(await page.getByText('No runs match these filters').count()).toBe(1);
  }, 45_000);

  it('finds the key’s tool call in the audit page', async () => {
    await expect
      .poll(
        async () => {
          await page.goto(`${gw.url}/console/w/${WS}/audit?key=${keyId}`);
          return page.locator('tbody tr').count();
        },
        { timeout: 10_000 },
      )
      .toBeGreaterThan(0);
    const rows = page.locator('tbody tr');
    expect(await rows.filter({ hasText: 'get_workspace_context' }).count()).toBe(1);
    await page.goto(`${gw.url}/console/w/${WS}/audit?key=${keyId}&outcome=blocked`);
    expect(await page.getByText('No audit entries match these filters').count()).toBe(1);
    await page.goto(`${gw.url}/console/w/${WS}/audit`);
    await axePass('audit');
    await shot('05-audit');
  });

  it('previews the tool list for an account and headers, and the preview follows a policy set in the form', async () => {
    await page.goto(`${gw.url}/console/w/${WS}/policy`);
    const visible = () => page.locator('#visible-tools li').allTextContents();
    const before = await visible();
    expect(before).toContain('get_workspace_context');
    await page.getByLabel('X-MCP-Exclude-Tools').fill('get_workspace_context');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.waitForURL(/x-mcp-exclude-tools=get_workspace_context/);
    expect(await visible()).toEqual(before.filter((t) => t !== 'get_workspace_context'));
    const disabled = before.find((t) => t !== 'get_workspace_context') as string;
    await page.getByRole('checkbox', { name: disabled, exact: true }).check();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.waitForURL(/done=policy-saved/);
    expect(await page.getByText('Policy saved.').count()).toBe(1);
    const stored = await gw.admin('GET', `/api/workspaces/${WS}/mcp-policy`);
    expect(stored.status).toBe(200);
    expect((stored.json as { disabledTools: string[] }).disabledTools).toEqual([disabled]);
    expect(await visible()).toEqual(before.filter((t) => t !== disabled));
    expect(await page.getByRole('cell', { name: 'workspace_disabled_tool' }).count()).toBe(1);
    await axePass('policy');
    await shot('06-policy-preview');
  });

  it('shows a copyable config for every client, referencing the key by its variable', async () => {
    await page.goto(`${gw.url}/console/w/${WS}/connect`);
    await page.getByLabel('Variable holding the key').fill('ACME_KEY');
    await page.getByRole('button', { name: 'Show configs' }).click();
    await page.waitForURL(/var=ACME_KEY/);
    const claude = await page.getByLabel('JSON for claude').inputValue();
    expect(claude).toContain(gw.mcpUrl(WS));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own variable syntax
    expect(claude).toContain('Bearer ${ACME_KEY}');
    expect(await page.locator('textarea[readonly]').count()).toBe(13);
    await axePass('connect');
    await shot('07-connect');
    await page.goto(`${gw.url}/console/w/${WS}/connections`);
    expect(await page.getByRole('button', { name: 'Check sales' }).count()).toBe(1);
    await axePass('connections');
    await shot('08-connections');
  });

  it('shows flow-authored markup as text on the flows pages, never running it', async () => {
    await page.goto(`${gw.url}/console/w/${WS}/flows`);
    expect(await page.locator('td').filter({ hasText: HOSTILE_DESCRIPTION }).count()).toBe(1);
    await page.getByRole('link', { name: 'daily-report' }).click();
    await page.waitForURL(/\/flows\/daily-report$/);
    expect(await page.getByText(HOSTILE_DESCRIPTION, { exact: true }).count()).toBe(1);
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.title()).not.toBe('PWNED');
    expect(dialogs).toEqual([]);
    await axePass('flow');
    await shot('09-flow');
  });

  it('shows what an agent sent with send_feedback on the Feedback page, inert and filterable', async () => {
    const agent = await gw.mintKey(WS, ['feedback.send'], 'feedback-agent');
    const sent = await mcpPost(gw.mcpUrl(WS), {
      token: agent.apiKey,
      protocolVersion: '2025-11-25',
      body: rpc('tools/call', {
        name: 'send_feedback',
        arguments: { summary: HOSTILE_DESCRIPTION, details: 'the docs\nskip retries', area: 'docs' },
      }),
    });
    expect(asRpc(sent).error).toBeUndefined();
    await page.goto(`${gw.url}/console/w/${WS}/keys`);
    await page.getByRole('link', { name: 'Feedback', exact: true }).click();
    await page.waitForURL(new RegExp(`/console/w/${WS}/feedback$`));
    const row = page.locator('tbody tr').filter({ hasText: HOSTILE_DESCRIPTION });
    expect(await row.count()).toBe(1);
    expect(await row.getByText('skip retries').count()).toBe(1);
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.title()).not.toBe('PWNED');
    expect(dialogs).toEqual([]);
    await axePass('feedback');
    await shot('10-feedback');
    await page.getByLabel('Area').selectOption('setup');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/area=setup/);
    expect(await page.getByText('No feedback matches these filters').count()).toBe(1);
  });

  it('signs out, and the old session no longer opens a page', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/sign-in$/);
    await page.goto(`${gw.url}/console/w/${WS}/audit`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  });

  it('has no serious or critical accessibility violations on the pages visited', () => {
    expect(axeFindings).toEqual([]);
  });
});
