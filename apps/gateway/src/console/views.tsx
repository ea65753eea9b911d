/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx';
import { SCRIPT, STYLESHEET } from './assets.js';

export type Nav =
  | 'keys'
  | 'connections'
  | 'flows'
  | 'runs'
  | 'usage'
  | 'audit'
  | 'feedback'
  | 'policy'
  | 'connect'
  | 'workspaces';

export interface PageFrame {
  title: string;
  /** The workspace the page belongs to; null on sign-in and the operator's workspace list. */
  workspaceId: string | null;
  nav: Nav | null;
  /** Present once signed in: the sign-out form needs it. */
  csrf: string | null;
  operator: boolean;
  /** Seconds until the page reloads itself (a run still in progress); no script needed. */
  refresh?: number;
}

const NAV: { id: Nav; label: string; path: string }[] = [
  { id: 'keys', label: 'Service accounts & keys', path: 'keys' },
  { id: 'connections', label: 'Connections', path: 'connections' },
  { id: 'flows', label: 'Flows', path: 'flows' },
  { id: 'runs', label: 'Runs', path: 'runs' },
  { id: 'usage', label: 'Usage', path: 'usage' },
  { id: 'audit', label: 'Audit', path: 'audit' },
  { id: 'feedback', label: 'Feedback', path: 'feedback' },
  { id: 'policy', label: 'MCP policy', path: 'policy' },
  { id: 'connect', label: 'Connect your agent', path: 'connect' },
];

export function Layout(props: PageFrame & { children?: Child }) {
  const ws = props.workspaceId;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {props.refresh ? <meta http-equiv="refresh" content={String(props.refresh)} /> : null}
        <title>{`${props.title} · Flowgate console`}</title>
        <link rel="stylesheet" href={STYLESHEET.path} />
        <script src={SCRIPT.path} defer />
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        {props.csrf !== null ? (
          <header class="top">
            <a class="brand" href="/console">
              Flowgate console
            </a>
            {ws ? <span class="muted">workspace {ws}</span> : null}
            <nav class="main" aria-label="Console">
              <ul>
                {ws
                  ? NAV.map((n) => (
                      <li>
                        <a
                          href={`/console/w/${ws}/${n.path}`}
                          aria-current={props.nav === n.id ? 'page' : undefined}
                        >
                          {n.label}
                        </a>
                      </li>
                    ))
                  : null}
                {props.operator ? (
                  <li>
                    <a
                      href="/console/workspaces"
                      aria-current={props.nav === 'workspaces' ? 'page' : undefined}
                    >
                      Workspaces
                    </a>
                  </li>
                ) : null}
              </ul>
            </nav>
            <form method="post" action="/console/sign-out">
              <input type="hidden" name="_csrf" value={props.csrf} />
              <button type="submit" class="secondary">
                Sign out
              </button>
            </form>
          </header>
        ) : null}
        <main id="main">{props.children}</main>
      </body>
    </html>
  );
}

export function Notice(props: { kind?: 'error' | 'info'; children?: Child }) {
  return (
    <div
      class={props.kind === 'error' ? 'notice error' : 'notice'}
      role={props.kind === 'error' ? 'alert' : 'status'}
    >
      {props.children}
    </div>
  );
}

/** A list filter: a labelled select whose first option, "any", leaves the filter off. */
export function FilterSelect(props: {
  label: string;
  name: string;
  options: readonly string[];
  value: string | undefined;
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">any</option>
        {props.options.map((o) => (
          <option value={o} selected={o === props.value}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A time filter in whole UTC minutes (what `<input type="datetime-local">` sends, without a zone). */
export function FilterInstant(props: { label: string; name: string; value: string | undefined }) {
  return (
    <label>
      {props.label} (UTC)
      <input type="datetime-local" name={props.name} value={props.value ?? ''} />
    </label>
  );
}

/** The value of a FilterInstant field, or undefined when absent or not a `YYYY-MM-DDTHH:MM` minute. */
export function utcMinute(value: string | undefined): string | undefined {
  return value !== undefined && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value) ? value : undefined;
}

export function Empty(props: { children?: Child }) {
  return <p class="empty">{props.children}</p>;
}

/** A table with column headers that scrolls sideways on narrow screens (focusable, so keyboards can scroll it). */
export function Table(props: { columns: string[]; children?: Child }) {
  return (
    <div class="scroll" tabindex={0}>
      <table>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col">{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

export function Badge(props: { value: string }) {
  return <span class={`badge s-${props.value.replace(/[^a-z-]/g, '')}`}>{props.value}</span>;
}

export function Csrf(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

export function SignInPage(props: { formToken: string; code: string | null; error: string | null }) {
  return (
    <div class="signin">
      <h1>Sign in to the Flowgate console</h1>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      {props.code ? (
        <form method="post" action="/console/sign-in" class="stack">
          <input type="hidden" name="_form" value={props.formToken} />
          <input type="hidden" name="code" value={props.code} />
          <p>This one-time link signs you in to the demo workspace.</p>
          <button type="submit">Continue</button>
        </form>
      ) : (
        <form method="post" action="/console/sign-in" class="stack">
          <input type="hidden" name="_form" value={props.formToken} />
          <label>
            Operator token or workspace-admin token
            <input type="password" name="token" autocomplete="off" required />
          </label>
          <button type="submit">Sign in</button>
          <p class="muted">
            The token is checked once and never stored; the console keeps a session of its own for 8 hours at
            most. Service-account API keys cannot manage a workspace and cannot sign in here.
          </p>
        </form>
      )}
    </div>
  );
}

export function Pager(props: { next: string | null; label?: string }) {
  if (!props.next) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <a href={props.next}>{props.label ?? 'Older / more →'}</a>
    </nav>
  );
}

export function Json(props: { value: unknown }) {
  return <pre tabindex={0}>{JSON.stringify(props.value, null, 2)}</pre>;
}

export function when(iso: unknown): string {
  return typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—';
}
