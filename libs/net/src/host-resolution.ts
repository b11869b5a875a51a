import { lookup } from 'node:dns/promises';
import { hostRefusalReason, type AddressPolicy, type AddressRefusal } from './address-policy';
import { isIpLiteral, normalizeHost } from './ip-literal';
import { OutboundRequestRefused } from './outbound-errors';

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Turns a host name into every address it stands for; injectable so tests never touch real DNS. */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/** getaddrinfo, as Node's own connections use it: /etc/hosts included, every address returned. */
export const systemResolver: HostResolver = (host) => lookup(host, { all: true });

function codedError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/**
 * Resolves with a deadline: getaddrinfo has none of its own worth waiting for. An empty answer is
 * an error too (ENOTFOUND, like dns.lookup), so callers always get at least one address.
 */
export async function resolveWithin(resolver: HostResolver, host: string, timeoutMs: number): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(codedError('OUTBOUND_RESOLVE_TIMEOUT', `resolving ${host} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const addresses = await Promise.race([resolver(host), deadline]);
    if (addresses.length === 0) throw codedError('ENOTFOUND', `${host} has no addresses`);
    return addresses;
  } finally {
    clearTimeout(timer);
  }
}

/** The first refused address among a host's addresses; one is enough, the caller may get any of them. */
export function refusedAmong(policy: AddressPolicy, addresses: readonly ResolvedAddress[]): AddressRefusal | undefined {
  for (const { address } of addresses) {
    const verdict = policy.judgeAddress(address);
    if (!verdict.allowed) return verdict;
  }
  return undefined;
}

/**
 * The addresses a connection to `host` may use, resolved exactly once: the caller must connect to
 * one of these and never resolve the name again, or a rebinding DNS server could answer a public
 * address here and a private one for the connection. Rejects with OutboundRequestRefused when any
 * address is refused, or with the resolver's error (ENOTFOUND, OUTBOUND_RESOLVE_TIMEOUT).
 */
export async function resolveAllowedAddresses(
  policy: AddressPolicy,
  resolver: HostResolver,
  host: string,
  timeoutMs: number,
): Promise<ResolvedAddress[]> {
  const name = normalizeHost(host);
  if (isIpLiteral(name)) {
    const verdict = policy.judgeAddress(name);
    if (!verdict.allowed) throw new OutboundRequestRefused('OUTBOUND_ADDRESS_REFUSED', verdict.reason, { host: name, address: name, kind: verdict.kind });
    return [{ address: name, family: name.includes(':') ? 6 : 4 }];
  }
  const addresses = await resolveWithin(resolver, name, timeoutMs);
  // An allowlisted name is trusted whatever it resolves to (that is what listing it means).
  if (policy.isHostAllowlisted(name)) return addresses;
  const refusal = refusedAmong(policy, addresses);
  if (refusal !== undefined) {
    throw new OutboundRequestRefused('OUTBOUND_ADDRESS_REFUSED', hostRefusalReason(name, refusal), {
      host: name,
      address: refusal.address,
      kind: refusal.kind,
    });
  }
  return addresses;
}
