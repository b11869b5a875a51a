import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { IPv4, IPv6 } from 'ipaddr.js';
import { ALLOWLIST_SETTING, Allowlist } from './address-allowlist';
import { parseIp, unbracketed } from './ip-literal';

export type RefusedAddressKind =
  | 'loopback'
  | 'unspecified'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'ipv4-tunnel'
  | 'non-global';

export interface AddressRefusal {
  kind: RefusedAddressKind;
  /** The address as it was given (what the operator would add to the allowlist). */
  address: string;
  /** A noun phrase ("a private address") to build sentences from. */
  description: string;
  /** A whole sentence saying why, and how to allow it. */
  reason: string;
}

export type AddressVerdict = { allowed: true; allowlisted: boolean } | ({ allowed: false } & AddressRefusal);

interface Classification {
  kind: RefusedAddressKind;
  description: string;
}

/** Keyed by ipaddr.js range names; a range ipaddr knows but this table does not is 'reserved'. */
const IPV4_RANGES: Record<string, Classification> = {
  unspecified: { kind: 'unspecified', description: 'an unspecified address (0.0.0.0/8)' },
  broadcast: { kind: 'broadcast', description: 'the broadcast address' },
  multicast: { kind: 'multicast', description: 'a multicast address' },
  linkLocal: { kind: 'link-local', description: 'a link-local address' },
  loopback: { kind: 'loopback', description: 'a loopback address' },
  carrierGradeNat: { kind: 'shared', description: 'a shared (carrier-grade NAT) address' },
  private: { kind: 'private', description: 'a private address' },
};

const IPV6_RANGES: Record<string, Classification> = {
  unspecified: { kind: 'unspecified', description: 'the unspecified address (::)' },
  loopback: { kind: 'loopback', description: 'a loopback address' },
  linkLocal: { kind: 'link-local', description: 'a link-local address' },
  multicast: { kind: 'multicast', description: 'a multicast address' },
  uniqueLocal: { kind: 'private', description: 'a private (unique-local) address' },
  deprecatedSiteLocal: { kind: 'private', description: 'a private (site-local) address' },
  // Tunnel and translation ranges are refused outright rather than judged by the IPv4 inside:
  // which IPv4 host a 6to4 relay, a Teredo server (whose client address is obfuscated) or a
  // local translator ends up reaching is not something this process can know reliably.
  '6to4': { kind: 'ipv4-tunnel', description: 'a 6to4 tunnel address' },
  teredo: { kind: 'ipv4-tunnel', description: 'a Teredo tunnel address' },
  rfc6145: { kind: 'ipv4-tunnel', description: 'an IPv4-translated address' },
  // Only 64:ff9b:1::/48 lands here: the well-known 64:ff9b::/96 is judged by its IPv4 first.
  rfc6052: { kind: 'ipv4-tunnel', description: 'a local-use NAT64 address' },
};

/** Worth naming: it is the target of most SSRF attempts (credentials of the host's cloud role). */
const CLOUD_METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function withMetadataNote(ip: IPv4 | IPv6, found: Classification): Classification {
  if (!CLOUD_METADATA_ADDRESSES.has(ip.toString())) return found;
  return { ...found, description: `${found.description} (the cloud metadata service)` };
}

/** Only ipaddr's 'unicast' is public: every special range it knows of (now or in a later version) is refused. */
function classifyIPv4(ip: IPv4): Classification | undefined {
  const range = ip.range();
  if (range === 'unicast') return undefined;
  return withMetadataNote(ip, IPV4_RANGES[range] ?? { kind: 'reserved', description: `a reserved address (${range})` });
}

function classifyIPv6(ip: IPv6): Classification | undefined {
  const range = ip.range();
  if (range === 'unicast') {
    // Stricter than ipaddr's 'unicast': IANA assigns public addresses only from 2000::/3, and the
    // rest of that "unicast" space is unassigned or, like ::a.b.c.d, a form that reaches IPv4.
    if (ip.match(GLOBAL_UNICAST)) return undefined;
    if (ip.parts.slice(0, 6).every((part) => part === 0)) {
      return { kind: 'ipv4-tunnel', description: 'a deprecated IPv4-compatible address' };
    }
    return { kind: 'non-global', description: 'an address outside the global unicast range 2000::/3' };
  }
  return withMetadataNote(ip, IPV6_RANGES[range] ?? { kind: 'reserved', description: `a reserved address (${range})` });
}

/**
 * The IPv4 address an IPv6 address stands for, where the mapping is fixed: IPv4-mapped
 * (::ffff:a.b.c.d, what a dual-stack socket actually connects to) and the well-known NAT64 prefix
 * (an IPv6-only network's way to reach any IPv4 host). Judging the IPv4 keeps public hosts reachable
 * through both while ::ffff:127.0.0.1 is exactly as refused as 127.0.0.1.
 */
function embeddedIPv4(ip: IPv6): IPv4 | undefined {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  if (ip.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4(ip.toByteArray().slice(12));
  return undefined;
}

/**
 * Decides which addresses the server may open connections to on a tenant's behalf: public
 * unicast only, unless the operator's allowlist (OUTBOUND_ALLOWED_HOSTS) says otherwise.
 */
export class AddressPolicy {
  private readonly allowlist: Allowlist;

  /** Throws OutboundAllowlistError for an unusable entry. */
  constructor(allowedHosts: readonly string[] = []) {
    this.allowlist = new Allowlist(allowedHosts);
  }

  /** Whether a host name is exempted by name (its addresses are then not judged). */
  isHostAllowlisted(host: string): boolean {
    return this.allowlist.coversHost(host);
  }

  /** Judges one IP literal (brackets allowed). Throws a TypeError for anything else: names must be resolved first. */
  judgeAddress(address: string): AddressVerdict {
    const literal = unbracketed(address.trim());
    if (isIP(literal) === 0) throw new TypeError(`not an IP address: "${address}"`);
    const ip = parseIp(literal);
    if (this.allowlist.coversAddress(ip)) return { allowed: true, allowlisted: true };
    if (ip instanceof ipaddr.IPv4) return verdict(literal, classifyIPv4(ip));
    const embedded = embeddedIPv4(ip);
    if (embedded === undefined) return verdict(literal, classifyIPv6(ip));
    if (this.allowlist.coversAddress(embedded)) return { allowed: true, allowlisted: true };
    const inner = classifyIPv4(embedded);
    return verdict(literal, inner && { kind: inner.kind, description: `an IPv6 form of ${embedded.toString()}, ${inner.description}` });
  }
}

function verdict(address: string, found: Classification | undefined): AddressVerdict {
  if (found === undefined) return { allowed: true, allowlisted: false };
  return {
    allowed: false,
    kind: found.kind,
    address,
    description: found.description,
    reason: `${address} is ${found.description}; add it to ${ALLOWLIST_SETTING} to allow it`,
  };
}

/** The sentence for a host name whose resolution includes a refused address. */
export function hostRefusalReason(host: string, refusal: AddressRefusal): string {
  return `${host} resolves to ${refusal.address}, ${refusal.description}; add ${host} to ${ALLOWLIST_SETTING} to allow it`;
}
