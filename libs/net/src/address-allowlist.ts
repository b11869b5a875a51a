import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { IPv4, IPv6 } from 'ipaddr.js';
import { isIpLiteral, normalizeHost, parseIp, unbracketed } from './ip-literal';

/** The operator setting that exempts hosts; every refusal names it so the fix is one step away. */
export const ALLOWLIST_SETTING = 'OUTBOUND_ALLOWED_HOSTS';

/** Why an allowlist entry is unusable: thrown at construction so a typo stops the server at boot. */
export class OutboundAllowlistError extends Error {
  override readonly name = 'OutboundAllowlistError';

  constructor(
    readonly entry: string,
    problem: string,
  ) {
    super(
      `Invalid ${ALLOWLIST_SETTING} entry "${entry}": ${problem}. ` +
        'Expected a host name, an IP address or a CIDR range, e.g. vllm.lan, 10.0.0.5, 10.0.0.0/8, ::1',
    );
  }
}

type CidrRange = [IPv4 | IPv6, number];

const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
// The WHATWG URL parser reads a host whose last label is a number as IPv4 ("127.1", "0x7f.1"), so
// such a "name" could never match a URL's host; better to say so than to accept a dead entry.
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|\d+)$/;

function parseCidr(raw: string, entry: string): CidrRange {
  const slash = entry.lastIndexOf('/');
  const address = unbracketed(entry.slice(0, slash));
  const prefix = entry.slice(slash + 1);
  const family = isIP(address);
  if (family === 0) throw new OutboundAllowlistError(raw, `"${address}" is not an IP address`);
  const bits = Number(prefix);
  const maxBits = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || bits > maxBits) {
    throw new OutboundAllowlistError(raw, `the prefix length must be a number from 0 to ${maxBits}`);
  }
  return [parseIp(address), bits];
}

function parseHostName(raw: string, entry: string): string {
  if (entry.includes('://')) throw new OutboundAllowlistError(raw, 'give the host name only, not a URL');
  if (entry.includes('*')) throw new OutboundAllowlistError(raw, 'wildcards are not supported; list each host name');
  if (entry.includes(':')) throw new OutboundAllowlistError(raw, 'not a valid IP address, and ports are not supported (an entry covers every port)');
  // Before domainToASCII, which answers '' for an invalid IPv4 such as 300.1.1.1.
  const lastLabel = normalizeHost(entry).split('.').pop() ?? '';
  if (NUMERIC_LABEL.test(lastLabel)) {
    throw new OutboundAllowlistError(raw, 'looks like an IPv4 address in a shortened or non-decimal form; write it as four decimal numbers');
  }
  const name = normalizeHost(domainToASCII(entry));
  if (name === '' || name.length > 253 || !name.split('.').every((label) => HOST_LABEL.test(label))) {
    throw new OutboundAllowlistError(raw, 'not a valid host name');
  }
  return name;
}

/**
 * The operator's exemptions. Blank entries are skipped (a trailing comma in the setting is not
 * worth a failed boot); anything else that is not a host name, IP address or CIDR range throws.
 */
export class Allowlist {
  private readonly names = new Set<string>();
  private readonly ranges: CidrRange[] = [];

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      if (entry.includes('/') && !entry.includes('://')) this.ranges.push(parseCidr(raw, entry));
      else if (isIpLiteral(entry)) {
        const ip = parseIp(unbracketed(entry));
        this.ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
      } else this.names.add(parseHostName(raw, entry));
    }
  }

  coversHost(host: string): boolean {
    return this.names.has(normalizeHost(host));
  }

  coversAddress(ip: IPv4 | IPv6): boolean {
    // ipaddr throws when matching across families, so only same-family ranges are compared.
    return this.ranges.some(([network, bits]) => network.kind() === ip.kind() && ip.match(network, bits));
  }
}
