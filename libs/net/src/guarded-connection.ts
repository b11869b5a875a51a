import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressPolicy } from './address-policy';
import { resolveAllowedAddresses, type HostResolver, type ResolvedAddress } from './host-resolution';

export interface GuardedConnectionOptions {
  policy: AddressPolicy;
  resolver: HostResolver;
  /** Bounds name resolution and, separately, the TCP/TLS handshake. */
  connectTimeoutMs: number;
}

/**
 * An undici connector that decides where each new connection goes: the host is resolved once,
 * through our resolver, every address is judged, and the socket is opened to the judged address
 * itself (the IP goes to undici's own connector as the hostname). Nothing resolves the name a
 * second time, so a DNS answer that changes between check and connect (rebinding) cannot slip in.
 * TLS still verifies the certificate against the original name: it stays the SNI servername.
 */
export function guardedConnector({ policy, resolver, connectTimeoutMs }: GuardedConnectionOptions): buildConnector.connector {
  const connect = buildConnector({ timeout: connectTimeoutMs });
  return (options, callback) => {
    const { hostname } = options;
    resolveAllowedAddresses(policy, resolver, hostname, connectTimeoutMs).then(
      (addresses) => {
        try {
          // Only the first address: trying the others would need our own happy-eyeballs; all of
          // them were judged, so whichever is used is allowed.
          const [first] = addresses as [ResolvedAddress, ...ResolvedAddress[]];
          const servername = options.servername ?? (isIP(hostname) === 0 ? hostname : undefined);
          connect({ ...options, hostname: first.address, servername }, callback);
        } catch (error) {
          callback(error as Error, null);
        }
      },
      (error: Error) => callback(error, null),
    );
  };
}

function familyOf(option: LookupOptions['family']): 4 | 6 | undefined {
  if (option === 4 || option === 'IPv4') return 4;
  if (option === 6 || option === 'IPv6') return 6;
  return undefined;
}

/**
 * A net.LookupFunction (the `lookup` option of net, http and the `ws` package) that refuses, with
 * an OutboundRequestRefused error, a name that resolves to any refused address. Node calls it
 * with `all: true` (autoSelectFamily, the default since Node 20: answer every address) or without
 * (answer one address and its family); both are honoured, as is a requested `family`.
 *
 * Node skips lookup for an IP-literal host (ws://127.0.0.1/): this cannot see those connections,
 * so callers must check the URL (checkOutboundUrl / OutboundGuard.checkUrl) before connecting.
 */
export function guardedLookup({ policy, resolver, connectTimeoutMs }: GuardedConnectionOptions): LookupFunction {
  return (hostname, options, callback) => {
    const fail = (error: NodeJS.ErrnoException) => (options.all === true ? callback(error, []) : callback(error, ''));
    resolveAllowedAddresses(policy, resolver, hostname, connectTimeoutMs).then((addresses) => {
      const family = familyOf(options.family);
      const wanted = family === undefined ? addresses : addresses.filter((entry) => entry.family === family);
      const [first] = wanted;
      if (first === undefined) {
        fail(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND', hostname }));
        return;
      }
      if (options.all === true) callback(null, wanted.map((entry): LookupAddress => ({ address: entry.address, family: entry.family })));
      else callback(null, first.address, first.family);
    }, fail);
  };
}
