import { ALLOWLIST_SETTING } from './address-allowlist';
import { AddressPolicy, hostRefusalReason } from './address-policy';
import { isIpLiteral, normalizeHost } from './ip-literal';
import { refusedAmong, resolveWithin, systemResolver, type HostResolver } from './host-resolution';

/** 'http' for webhooks and OpenAI-compatible base URLs, 'ws' for realtime endpoints. */
export type OutboundUrlKind = 'http' | 'ws';

export type OutboundUrlCheck = { ok: true; warning?: string } | { ok: false; reason: string };

export interface OutboundUrlRuleOptions {
  kind: OutboundUrlKind;
  /** The operator's allowlist; without one nothing is exempt (the safe default). */
  policy?: AddressPolicy;
}

export interface ResolvedUrlRuleOptions extends OutboundUrlRuleOptions {
  resolver?: HostResolver;
  /** Bounds the name resolution: the check runs while a tenant waits on a save. */
  resolveTimeoutMs?: number;
}

export const DEFAULT_SAVE_TIME_RESOLVE_TIMEOUT_MS = 2_000;

const SCHEMES: Record<OutboundUrlKind, readonly string[]> = { http: ['http:', 'https:'], ws: ['ws:', 'wss:'] };

const STRICT_POLICY = new AddressPolicy([]);

type Inspection = { ok: false; reason: string } | { ok: true; host: string; needsResolution: boolean };

function refused(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/**
 * Everything that can be decided without DNS. The WHATWG parser is the one undici and ws use, so
 * the host judged here is the host they connect to: "2130706433", "0x7f.1" and "127.1" are all
 * already 127.0.0.1 by the time they are judged.
 */
function inspect(url: string, { kind, policy = STRICT_POLICY }: OutboundUrlRuleOptions): Inspection {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refused(`"${url}" is not a valid absolute URL`);
  }
  const schemes = SCHEMES[kind];
  if (!schemes.includes(parsed.protocol)) {
    return refused(`only ${schemes.join(' and ')} URLs are allowed here, not ${parsed.protocol}`);
  }
  // Credentials in a URL end up in logs and in anything the URL is shown in; headers are the place.
  if (parsed.username !== '' || parsed.password !== '') {
    return refused('the URL contains credentials (user:password@); send them in a header instead');
  }
  const host = normalizeHost(parsed.hostname);
  if (host === '') return refused('the URL has no host');
  if (isIpLiteral(host)) {
    const verdict = policy.judgeAddress(host);
    return verdict.allowed ? { ok: true, host, needsResolution: false } : refused(verdict.reason);
  }
  if (policy.isHostAllowlisted(host)) return { ok: true, host, needsResolution: false };
  // Resolvers answer these with loopback without asking DNS (RFC 6761); refusing by name gives a
  // clearer reason than waiting for the resolved 127.0.0.1.
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return refused(`${host} is a loopback host name; add it to ${ALLOWLIST_SETTING} to allow it`);
  }
  return { ok: true, host, needsResolution: true };
}

/**
 * The save-time rule for a tenant-supplied URL, without DNS. A host name passes here; where it
 * points is judged when the name is resolved (checkOutboundUrlResolved, and at every connect).
 */
export function checkOutboundUrl(url: string, options: OutboundUrlRuleOptions): OutboundUrlCheck {
  const inspection = inspect(url, options);
  return inspection.ok ? { ok: true } : inspection;
}

/**
 * checkOutboundUrl plus a look at what the host name resolves to now, refusing if any address is
 * refused. A name that does not resolve (yet) is not refused: DNS may be set up after the save,
 * and every connection is checked again anyway; the result then carries a `warning` instead.
 */
export async function checkOutboundUrlResolved(url: string, options: ResolvedUrlRuleOptions): Promise<OutboundUrlCheck> {
  const inspection = inspect(url, options);
  if (!inspection.ok) return inspection;
  if (!inspection.needsResolution) return { ok: true };
  const { host } = inspection;
  const { policy = STRICT_POLICY, resolver = systemResolver, resolveTimeoutMs = DEFAULT_SAVE_TIME_RESOLVE_TIMEOUT_MS } = options;
  let addresses;
  try {
    addresses = await resolveWithin(resolver, host, resolveTimeoutMs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { ok: true, warning: `${host} could not be resolved now (${code}); it will be checked again when a request is made` };
  }
  const refusal = refusedAmong(policy, addresses);
  return refusal === undefined ? { ok: true } : refused(hostRefusalReason(host, refusal));
}
