/** @jsxImportSource hono/jsx */
import {
  DEFAULT_TOKEN_ENV_VAR,
  isEnvVarName,
  NO_FLAGS,
  PROVIDERS,
  renderConfig,
  TRANSPORTS,
  type Transport,
} from '@flowgate/client-config';
import { frameOf, type PageKit, render } from '../kit.js';
import { Notice } from '../views.js';

/** Connect your agent: the client configs. */
export function installConnectPage(kit: PageKit): void {
  const { app: console_, deps } = kit;
  console_.get('/console/w/:ws/connect', (c) => {
    const ws = c.req.param('ws') as string;
    const rawVar = c.req.query('var') ?? DEFAULT_TOKEN_ENV_VAR;
    const varName = isEnvVarName(rawVar) ? rawVar : DEFAULT_TOKEN_ENV_VAR;
    const transport: Transport = (TRANSPORTS as readonly string[]).includes(c.req.query('transport') ?? '')
      ? (c.req.query('transport') as Transport)
      : 'http';
    const apiUrl = deps.config.publicUrlConfigured ? deps.config.publicUrl : new URL(c.req.url).origin;
    const configs = PROVIDERS.map((provider) =>
      renderConfig({
        provider,
        transport,
        workspaceId: ws,
        apiUrl,
        tokenEnvVar: varName,
        narrowing: NO_FLAGS,
      }),
    );
    return render(
      c,
      frameOf(c, 'Connect your agent', ws, 'connect'),
      <>
        <h1>Connect your agent</h1>
        <p>
          Each entry references the key through the variable <code>{varName}</code>; the key itself never goes
          in a config file. Create a key on the <a href={`/console/w/${ws}/keys`}>keys page</a>, then{' '}
          <code>export {varName}=…</code> where the client runs.
        </p>
        {rawVar !== varName ? <Notice kind="error">Not a variable name; showing {varName}.</Notice> : null}
        <form method="get" action={`/console/w/${ws}/connect`} class="filters" data-autosubmit="">
          <label>
            Variable holding the key
            <input name="var" value={varName} maxlength={100} pattern="[A-Za-z_][A-Za-z0-9_]*" />
          </label>
          <label>
            Transport
            <select name="transport">
              {TRANSPORTS.map((t) => (
                <option value={t} selected={t === transport}>
                  {t === 'http' ? 'Streamable HTTP' : 'stdio (flowgate mcp stdio)'}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="secondary">
            Show configs
          </button>
        </form>
        {configs.map((cfg, i) => (
          <section aria-labelledby={`client-${cfg.provider}`}>
            <h2 id={`client-${cfg.provider}`}>{cfg.provider}</h2>
            <p class="muted">In {cfg.file}</p>
            <div class="secret">
              <label for={`config-${i}`} class="muted">
                {cfg.format.toUpperCase()} for {cfg.provider}
              </label>
              <button type="button" class="secondary" data-copy={`config-${i}`}>
                Copy
              </button>
            </div>
            <textarea
              id={`config-${i}`}
              readonly
              rows={Math.min(16, cfg.content.split('\n').length + 1)}
              class="mono wide"
            >
              {cfg.content}
            </textarea>
            {cfg.notes.length > 0 ? (
              <ul class="muted">
                {cfg.notes.map((n) => (
                  <li>{n}</li>
                ))}
              </ul>
            ) : null}
          </section>
        ))}
      </>,
    );
  });
}
