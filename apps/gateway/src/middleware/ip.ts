import { BlockList, isIP } from 'node:net';

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
