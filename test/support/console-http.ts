import { expect } from 'vitest';

/**
 * The console as a browser without JavaScript sees it over HTTP: a cookie jar and the last page's CSRF token, redirects
 * not followed. Each call goes to `baseUrl` unless another is given (replicas share one jar across gateways).
 */
export class ConsoleClient {
  cookies = new Map<string, string>();
  csrf = '';

  constructor(private readonly baseUrl: string) {}

  async fetch(method: string, path: string, form?: Record<string, string>, baseUrl = this.baseUrl) {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const body = form ? new URLSearchParams(form).toString() : undefined;
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      redirect: 'manual',
      ...(body ? { body } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** A page read whole; its CSRF token, if it has one, becomes the one the next form sends. */
  async page(path: string, baseUrl = this.baseUrl): Promise<{ res: Response; html: string }> {
    const res = await this.fetch('GET', path, undefined, baseUrl);
    const html = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (csrf) this.csrf = csrf;
    return { res, html };
  }

  /** The sign-in form submitted with the operator token, an API key, or a one-time code. */
  async signIn(field: 'token' | 'code', value: string, baseUrl = this.baseUrl): Promise<Response> {
    const query = field === 'code' ? `?code=${encodeURIComponent(value)}` : '';
    const { html } = await this.page(`/console/sign-in${query}`, baseUrl);
    const form = /name="_form" value="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(form).not.toBe('');
    return this.fetch('POST', '/console/sign-in', { _form: form, [field]: value }, baseUrl);
  }
}
