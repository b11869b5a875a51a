import ipaddr from 'ipaddr.js';

/**
 * The anonymous rate limit bucket of a client address (Express's `request.ip`, which honours the
 * app's `trust proxy` setting). IPv4-mapped IPv6 counts as the IPv4 address; other IPv6 addresses
 * count per /64, since one client usually holds a whole /64 and could otherwise rotate through
 * 2^64 buckets. No address at all (a socket already gone) shares one bucket.
 */
export function anonymousBucket(ip: string | undefined): string {
  if (ip === undefined || !ipaddr.isValid(ip)) return 'anon:unknown';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return `anon:${address.toString()}`;
  return `anon:${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`).toString()}/64`;
}
