import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { IPv4, IPv6 } from 'ipaddr.js';

/**
 * ipaddr.parse reads "::127.0.0.1" as ::ffff:127.0.0.1 (IPv4-mapped), while every socket API reads
 * it as ::7f00:1 (IPv4-compatible): a different address. Rewriting a dotted tail as two hex groups
 * first makes ipaddr see what a connection would use. `literal` has passed net.isIP.
 */
export function parseIp(literal: string): IPv4 | IPv6 {
  // The zone ("%eth0") says which interface, not which address; ipaddr rejects some zone names.
  const [address = ''] = literal.split('%');
  if (!address.includes(':') || !address.includes('.')) return ipaddr.parse(address);
  const tail = address.slice(address.lastIndexOf(':') + 1);
  const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
  const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  return ipaddr.parse(address.slice(0, address.length - tail.length) + hex);
}

export function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Lower case, no brackets, no trailing dot: "API.Example.com." and "api.example.com" are one host. */
export function normalizeHost(host: string): string {
  const lower = unbracketed(host.trim().toLowerCase());
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Whether `host` is an IP literal (brackets allowed); strict: "127.1" is a name here, as in Node's net. */
export function isIpLiteral(host: string): boolean {
  return isIP(unbracketed(host)) !== 0;
}
