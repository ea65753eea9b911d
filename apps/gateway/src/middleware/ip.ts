import { BlockList, isIP } from 'node:net';
import { AppError } from '@flowgate/core';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, RuntimeBindings } from '../context.js';

/** Parses `allowedIps` entries (addresses or CIDR ranges, v4 or v6); returns null for an invalid entry. */
export function parseIpRule(
  entry: string,
): { address: string; prefix: number | null; family: 'ipv4' | 'ipv6' } | null {
  const [address, prefixText, extra] = entry.trim().split('/');
  if (!address || extra !== undefined) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { address, prefix: null, family };
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > (version === 4 ? 32 : 128)) return null;
  return { address, prefix, family };
}

const cache = new Map<string, BlockList>();

export function ipAllowed(ip: string, rules: readonly string[]): boolean {
  const cacheKey = rules.join(',');
  let list = cache.get(cacheKey);
  if (!list) {
    list = new BlockList();
    for (const r of rules) {
      const rule = parseIpRule(r);
      if (!rule) continue;
      if (rule.prefix === null) list.addAddress(rule.address, rule.family);
      else list.addSubnet(rule.address, rule.prefix, rule.family);
    }
    if (cache.size > 1000) cache.clear();
    cache.set(cacheKey, list);
  }
  const normalised = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const version = isIP(normalised);
  if (version === 0) return false;
  return list.check(normalised, version === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The caller's address. Behind N trusted proxies that each append to X-Forwarded-For, the client is the N-th
 * entry from the right: everything further left was written by the client and proves nothing.
 */
export function clientIp(c: Context, trustedHops: number): string | null {
  if (trustedHops > 0) {
    const entries = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const candidate = entries[entries.length - trustedHops];
    if (candidate !== undefined) return isIP(candidate) ? candidate : null;
  }
  const env = c.env as RuntimeBindings | undefined;
  return env?.remoteAddress ?? env?.incoming?.socket?.remoteAddress ?? null;
}

/** The MCP endpoints of a workspace (`/mcp`, `/flows/{slug}/mcp`): the traffic the allowlist always covers. */
const MCP_PATH = /^\/api\/workspaces\/[^/]+\/(?:flows\/[^/]+\/)?mcp\/?$/;

/**
 * The workspace's IP allowlist, when one is set (403 otherwise). It covers MCP traffic from anyone and admin calls
 * from workspace principals; the operator token's admin calls pass, so a policy can never lock out the one caller
 * able to undo it. Records the client address for the routes.
 */
export function ipAllowlist(trustProxy: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ip = clientIp(c, trustProxy);
    c.set('clientIp', ip);
    const { allowedIps } = c.get('policy');
    const operatorAdmin = c.get('principal').kind === 'operator' && !MCP_PATH.test(c.req.path);
    if (!operatorAdmin && allowedIps.length > 0 && (ip === null || !ipAllowed(ip, allowedIps))) {
      throw new AppError('ip_not_allowed', "the client address is not in this workspace's IP allowlist");
    }
    await next();
  };
}
