import ipaddr from 'ipaddr.js';

/** Express's named address ranges for `trust proxy`. */
const PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);
const MAX_HOPS = 10;

/**
 * TRUST_PROXY as Express's `trust proxy` takes it: a number of proxy hops in front of the server
 * (1 to 10), or a comma-separated list of the proxies' addresses, CIDR ranges and presets
 * (loopback, linklocal, uniquelocal). `true` (trust every hop) is refused on purpose: any client
 * could then choose its own address with X-Forwarded-For and slip out of its rate-limit bucket.
 * Returns undefined for anything else.
 */
export function parseTrustProxy(value: string): number | string[] | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    return hops >= 1 && hops <= MAX_HOPS ? hops : undefined;
  }
  const entries = trimmed.split(',').map((entry) => entry.trim());
  if (entries.length === 0 || entries.some((entry) => !isProxyAddress(entry))) return undefined;
  return entries;
}

function isProxyAddress(entry: string): boolean {
  if (PRESETS.has(entry)) return true;
  if (entry.includes('/')) return ipaddr.isValidCIDR(entry);
  return ipaddr.isValid(entry);
}
