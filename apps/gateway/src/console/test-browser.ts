import type { Harness } from '../testing.js';

/** The origin console tests address (the harness's public URL). */
export const BASE = 'http://127.0.0.1:8787';

/** A browser's view of one signed-in console user: its cookies, and the CSRF token the last page carried. */
export class Browser {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(private readonly h: Harness) {}

  async fetch(method: string, path: string, form?: Record<string, string | string[]>): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    let body: string | undefined;
    if (form) {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x);
      body = p.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await this.h.app.request(`${BASE}${path}`, { method, headers, ...(body ? { body } : {}) });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = (pair ?? '').split('=');
      if (!name) continue;
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value ?? '');
    }
    return res;
  }

  async page(path: string): Promise<{ res: Response; html: string }> {
    const res = await this.fetch('GET', path);
    const html = await res.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (m?.[1]) this.csrf = m[1];
    return { res, html };
  }

  async signInWithToken(token: string): Promise<Response> {
    const { html } = await this.page('/console/sign-in');
    const form = /name="_form" value="([^"]+)"/.exec(html)?.[1] ?? '';
    return this.fetch('POST', '/console/sign-in', { _form: form, token });
  }

  async signInWithCode(code: string): Promise<Response> {
    const { html } = await this.page(`/console/sign-in?code=${encodeURIComponent(code)}`);
    const form = /name="_form" value="([^"]+)"/.exec(html)?.[1] ?? '';
    return this.fetch('POST', '/console/sign-in', { _form: form, code });
  }
}
