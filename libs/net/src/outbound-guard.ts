import type { LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch, type RequestInit, type Response } from 'undici';
import { AddressPolicy } from './address-policy';
import { guardedConnector, guardedLookup } from './guarded-connection';
import { systemResolver, type HostResolver } from './host-resolution';
import { OutboundRequestRefused, OutboundTimeoutError, outboundRefusalOf } from './outbound-errors';
import { checkOutboundUrl, checkOutboundUrlResolved, type OutboundUrlCheck, type OutboundUrlKind } from './outbound-url-rule';
import { cappedBody, ResponseHeaders, type OutboundResponse } from './outbound-response';
import { capResponseBody } from './response-body-cap';

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface OutboundGuardOptions {
  /** OUTBOUND_ALLOWED_HOSTS: host names, IP addresses, CIDR ranges. Throws OutboundAllowlistError for a bad entry. */
  allowedHosts: readonly string[];
  /** How host names are resolved, for connections and checks alike; the system resolver by default. */
  resolver?: HostResolver;
  /** Bounds name resolution and the TCP/TLS handshake of each new connection (each, not together). */
  connectTimeoutMs?: number;
}

/**
 * fetch's init, less what the guard decides: `redirect` (never followed: a redirect would take
 * the request, and any signed body, to a URL nobody checked) and `dispatcher` (the guarded one).
 */
export type GuardedFetchInit = Omit<RequestInit, 'redirect' | 'dispatcher' | 'signal'> & {
  signal?: AbortSignal;
  /** Deadline for the whole exchange, body included: a stream read past it errors too. */
  timeoutMs: number;
  /** When set, the body errors with ResponseTooLargeError past this many bytes (see capResponseBody). */
  maxResponseBytes?: number;
};

/** What `request` takes: a method, headers and a byte or text body; the rest as for fetch. */
export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Deadline for the whole exchange, body included: a stream read past it errors too. */
  timeoutMs: number;
  /** When set, the body errors with ResponseTooLargeError past this many bytes. */
  maxResponseBytes?: number;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the endpoint';
  }
}

/**
 * The one way tenant-directed requests leave the server: every connection made through it goes
 * only to addresses the policy allows (public unicast, or the operator's OUTBOUND_ALLOWED_HOSTS),
 * judged on the address actually connected to. Create one per process and share it: its
 * dispatcher pools connections.
 */
export class OutboundGuard {
  readonly policy: AddressPolicy;
  /** An undici Agent whose every connection is judged; give it to undici's fetch/request directly when needed. */
  readonly dispatcher: Agent;
  /** For the `ws` package and Node's http/net: `new WebSocket(url, { lookup: guard.lookup })`; check the URL first. */
  readonly lookup: LookupFunction;
  private readonly resolver: HostResolver;

  constructor(options: OutboundGuardOptions) {
    this.policy = new AddressPolicy(options.allowedHosts);
    this.resolver = options.resolver ?? systemResolver;
    const connection = {
      policy: this.policy,
      resolver: this.resolver,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    };
    this.dispatcher = new Agent({ connect: guardedConnector(connection) });
    this.lookup = guardedLookup(connection);
  }

  /** The save-time rule with this guard's allowlist (no DNS). */
  checkUrl(url: string, kind: OutboundUrlKind): OutboundUrlCheck {
    return checkOutboundUrl(url, { kind, policy: this.policy });
  }

  /** checkUrl plus the host's current addresses; an unresolvable name passes with a warning. */
  checkUrlResolved(url: string, kind: OutboundUrlKind, options: { resolveTimeoutMs?: number } = {}): Promise<OutboundUrlCheck> {
    return checkOutboundUrlResolved(url, { kind, policy: this.policy, resolver: this.resolver, ...options });
  }

  /**
   * undici's fetch through the guarded dispatcher. The URL rule runs first, so a refused URL
   * opens no socket. Rejects with OutboundRequestRefused (URL or address refused, unwrapped
   * from undici's "fetch failed"), OutboundTimeoutError (timeoutMs passed), the caller's abort
   * reason, or undici's own error for anything else (ECONNREFUSED, ENOTFOUND sit in its `cause`).
   * A 3xx is returned as it is.
   */
  async fetch(url: string | URL, init: GuardedFetchInit): Promise<Response> {
    const { timeoutMs, maxResponseBytes, signal: callerSignal, ...rest } = init;
    // The deadline covers the body too, which may be read after fetch resolves: the timer is left
    // to fire (a no-op once the exchange is over).
    const { href, deadline, timer } = this.startExchange(url, timeoutMs);
    const signal = callerSignal === undefined ? deadline.signal : AbortSignal.any([callerSignal, deadline.signal]);
    let response: Response;
    try {
      response = await undiciFetch(href, { ...(await withPortableBody(rest)), signal, redirect: 'manual', dispatcher: this.dispatcher });
    } catch (error) {
      clearTimeout(timer);
      throw outboundRefusalOf(error) ?? error;
    }
    return maxResponseBytes === undefined ? response : capResponseBody(response, maxResponseBytes);
  }

  /**
   * The same guarded exchange on undici's request API, for the hot paths (remote engines: a
   * transcription, a token stream and a speech stream per turn). WHATWG fetch wraps every body in
   * web streams and promises; measured here, a streamed response cost ~0.4 ms of event loop more
   * than this. Same rules: URL checked first, no redirect followed (a 3xx is returned as it is), a
   * deadline for the whole exchange (OutboundTimeoutError), refusals unwrapped.
   */
  async request(url: string | URL, init: GuardedRequestInit): Promise<OutboundResponse> {
    const { timeoutMs, maxResponseBytes, signal: callerSignal, method = 'GET', headers, body } = init;
    const { href, deadline, timer } = this.startExchange(url, timeoutMs);
    // A listener removed when the exchange is over, rather than AbortSignal.any on every request.
    const followCaller = () => deadline.abort(callerSignal?.reason);
    if (callerSignal?.aborted) followCaller();
    else callerSignal?.addEventListener('abort', followCaller, { once: true });
    const release = () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', followCaller);
    };
    let answer: Awaited<ReturnType<Agent['request']>>;
    try {
      const { origin, pathname, search } = new URL(href);
      answer = await this.dispatcher.request({ origin, path: `${pathname}${search}`, method, headers, body, signal: deadline.signal });
    } catch (error) {
      release();
      throw outboundRefusalOf(error) ?? error;
    }
    answer.body.once('close', release);
    const responseHeaders = new ResponseHeaders(answer.headers);
    return {
      status: answer.statusCode,
      ok: answer.statusCode >= 200 && answer.statusCode < 300,
      headers: responseHeaders,
      body: maxResponseBytes === undefined ? answer.body : cappedBody(answer.body, responseHeaders, maxResponseBytes),
    };
  }

  /**
   * What fetch and request both do before any socket: the URL rule (a refused URL opens none) and
   * the whole-exchange deadline. Our own timer rather than AbortSignal.timeout: the abort reason is
   * then a typed error, which is also what a body read past the deadline rejects with. The timer
   * must not keep the process alive.
   */
  private startExchange(url: string | URL, timeoutMs: number): { href: string; deadline: AbortController; timer: NodeJS.Timeout } {
    if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive number of milliseconds, not ${timeoutMs}`);
    const href = url.toString();
    const check = this.checkUrl(href, 'http');
    if (!check.ok) throw new OutboundRequestRefused('OUTBOUND_URL_REFUSED', check.reason, { host: hostOf(href) });
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new OutboundTimeoutError(originOf(href), timeoutMs)), timeoutMs);
    timer.unref();
    return { href, deadline, timer };
  }

  /** Closes pooled connections (shutdown, tests). */
  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/**
 * undici's fetch does not recognise the global FormData (Node's built-in copy of undici is another
 * module), and would send `[object FormData]` as text/plain. Such a body is encoded to bytes with
 * the global Response, which sets the multipart boundary in its content type.
 */
async function withPortableBody<T extends { body?: unknown; headers?: unknown }>(init: T): Promise<T> {
  if (!(init.body instanceof globalThis.FormData)) return init;
  const encoded = new globalThis.Response(init.body);
  const headers = new globalThis.Headers(init.headers as ConstructorParameters<typeof globalThis.Headers>[0]);
  headers.set('content-type', encoded.headers.get('content-type') ?? 'multipart/form-data');
  return { ...init, body: Buffer.from(await encoded.arrayBuffer()), headers: Object.fromEntries(headers) };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}
