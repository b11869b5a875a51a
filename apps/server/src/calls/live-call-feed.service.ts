import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { CallRepository } from '@switchboard/persistence';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { ThrottledWarning } from '../auth/rate-limit/throttled-warning';
import { LIVE_FEED_LEASE_STORE, type LiveFeedLeaseStore } from './live-feed-leases/live-feed-lease-store';

/** How often a feed asks the database what changed. */
export const LIVE_FEED_POLL_MS = 1_000;
/**
 * `updated_at = now()` is the writing transaction's start time, so a change can commit with a
 * time a little before one already seen: each poll looks back this far and sends only rows whose
 * updatedAt differs from what this feed already sent.
 */
const LOOKBACK_MS = 5_000;
/** Keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/**
 * A feed ends after this long (the client reconnects): its key was checked when it opened, so a
 * revoked key loses the feed within this bound.
 */
export const LIVE_FEED_MAX_MS = 15 * 60_000;
/**
 * Open feeds per organization, over every process and instance (each feed polls the database once
 * a second): counted as leases in the shared store (Postgres, or Redis when REDIS_URL is set).
 */
export const LIVE_FEEDS_PER_ORGANIZATION = 10;
/**
 * A feed's lease lasts this long and is renewed every LIVE_FEED_LEASE_RENEW_MS while it is open, so
 * the slots of a process that died free themselves within this bound.
 */
export const LIVE_FEED_LEASE_TTL_MS = 30_000;
const LIVE_FEED_LEASE_RENEW_MS = 10_000;
/** How long opening (or shutdown's release) waits on the lease store before going on without it. */
const LEASE_CALL_TIMEOUT_MS = 2_000;
const UNAVAILABLE_LOG_INTERVAL_MS = 30_000;
const ROWS_PER_POLL = 200;

interface OpenFeed {
  organizationId: string;
  end(): void;
}

/** The lease of a feed; undefined when the store was unavailable and the process's own count decided. */
type LeaseId = string | undefined;

/**
 * `GET /v1/calls/live`: the organization's calls as they change, as server-sent events (`event:
 * call`, the call as GET /v1/calls lists it). Polling the calls table rather than listening inside
 * this process means every change is seen, whichever worker or instance made it.
 */
@Injectable()
export class LiveCallFeedService implements BeforeApplicationShutdown {
  private readonly feeds = new Set<OpenFeed>();
  /** Lease releases under way: shutdown waits for them (bounded) so a restart frees its slots at once. */
  private readonly releasing = new Set<Promise<void>>();
  private readonly unavailable: ThrottledWarning;

  constructor(
    private readonly calls: CallRepository,
    @Inject(LIVE_FEED_LEASE_STORE) private readonly leases: LiveFeedLeaseStore,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(LiveCallFeedService.name);
    this.unavailable = new ThrottledWarning(logger, UNAVAILABLE_LOG_INTERVAL_MS);
  }

  async open(organizationId: string, response: Response, now = new Date()): Promise<void> {
    // The client may go while the lease is taken: then nothing would ever end this feed.
    let gone = false;
    const onGone = () => (gone = true);
    response.once('close', onGone);
    const leaseId = await this.acquire(organizationId).finally(() => response.off('close', onGone));
    if (gone) {
      this.release(organizationId, leaseId);
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    response.write(`retry: 3000\n\n`);

    const sent = new Map<string, number>();
    let since = new Date(now.getTime() - LOOKBACK_MS);
    let polling = false;
    const poll = async () => {
      if (polling) return; // a slow database: skip the tick rather than pile up queries
      polling = true;
      try {
        const rows = await this.calls.listUpdatedSince(organizationId, since, ROWS_PER_POLL);
        for (const call of rows) {
          const version = call.updatedAt.getTime();
          if (sent.get(call.id) === version) continue;
          sent.set(call.id, version);
          response.write(`event: call\ndata: ${JSON.stringify(call)}\n\n`);
        }
        const newest = rows.at(-1)?.updatedAt.getTime();
        // A full page means more are waiting: continue from the last row, not from "now".
        const next = rows.length === ROWS_PER_POLL && newest !== undefined ? newest : Date.now() - LOOKBACK_MS;
        since = new Date(Math.max(since.getTime(), next));
        for (const [id, version] of sent) if (version < since.getTime() - LOOKBACK_MS) sent.delete(id);
      } catch (error) {
        this.logger.warn({ err: error, organizationId }, 'live call feed: poll failed; trying again next tick');
      } finally {
        polling = false;
      }
    };

    const renew = async () => {
      if (leaseId === undefined) return;
      const held = await this.leases.renew(organizationId, leaseId, LIVE_FEED_LEASE_TTL_MS).catch((error: unknown) => {
        this.unavailable.warn(error, `live call feed: renewing its lease (${this.leases.backend}) failed; the feed stays open`);
        return true;
      });
      if (held) return;
      // Expired (this process stalled past the TTL): the slot may be someone else's now.
      this.logger.warn({ organizationId }, 'live call feed: its lease expired; ending the feed (the client reconnects)');
      feed.end();
    };

    const poller = setInterval(() => void poll(), LIVE_FEED_POLL_MS);
    const heartbeat = setInterval(() => response.write(`: keep-alive\n\n`), HEARTBEAT_MS);
    const renewer = setInterval(() => void renew(), LIVE_FEED_LEASE_RENEW_MS);
    const expiry = setTimeout(() => feed.end(), LIVE_FEED_MAX_MS);
    let ended = false;
    const feed: OpenFeed = {
      organizationId,
      end: () => {
        if (ended) return;
        ended = true;
        clearInterval(poller);
        clearInterval(heartbeat);
        clearInterval(renewer);
        clearTimeout(expiry);
        this.feeds.delete(feed);
        this.release(organizationId, leaseId);
        if (!response.writableEnded) response.end();
      },
    };
    this.feeds.add(feed);
    response.on('close', () => feed.end());
    void poll();
  }

  get openFeeds(): number {
    return this.feeds.size;
  }

  /**
   * Before the HTTP server closes: it waits for open connections, and a feed never ends by itself
   * (clients reconnect, to another instance if this one is going away). Their leases are released
   * before the database closes.
   */
  async beforeApplicationShutdown(): Promise<void> {
    for (const feed of [...this.feeds]) feed.end();
    await Promise.all([...this.releasing]);
  }

  /**
   * A lease for a new feed, or 429 `too_many_live_feeds`. The process's own count is checked first
   * (it is a floor of the shared one, and costs nothing). When the store fails or does not answer
   * in time, that own count decides alone: the cap is then per process, as it was before leases,
   * rather than no feed opening while the store is down.
   */
  private async acquire(organizationId: string): Promise<LeaseId> {
    const openHere = [...this.feeds].filter((feed) => feed.organizationId === organizationId).length;
    if (openHere >= LIVE_FEEDS_PER_ORGANIZATION) throw tooManyFeeds();
    const leaseId = randomUUID();
    const taking = this.leases.acquire(organizationId, leaseId, LIVE_FEEDS_PER_ORGANIZATION, LIVE_FEED_LEASE_TTL_MS);
    const taken = await withDeadline(taking, LEASE_CALL_TIMEOUT_MS).catch((error: unknown) => {
      this.unavailable.warn(error, `live call feed: lease store (${this.leases.backend}) unavailable; counting this process's feeds only`);
      return undefined;
    });
    if (taken === undefined) {
      // A late answer may still have taken the lease: give it back rather than hold a slot for the TTL.
      void taking.then((late) => (late ? this.release(organizationId, leaseId) : undefined)).catch(() => undefined);
      return undefined;
    }
    if (!taken) throw tooManyFeeds();
    return leaseId;
  }

  private release(organizationId: string, leaseId: LeaseId): void {
    if (leaseId === undefined) return;
    const releasing = withDeadline(this.leases.release(organizationId, leaseId), LEASE_CALL_TIMEOUT_MS)
      .catch((error: unknown) => this.unavailable.warn(error, `live call feed: releasing its lease (${this.leases.backend}) failed; it expires on its own`))
      .finally(() => this.releasing.delete(releasing));
    this.releasing.add(releasing);
  }
}

function tooManyFeeds(): HttpException {
  return new HttpException(
    { statusCode: 429, error: 'Too Many Requests', code: 'too_many_live_feeds', message: `At most ${LIVE_FEEDS_PER_ORGANIZATION} live call feeds per organization at once; close one first.` },
    HttpStatus.TOO_MANY_REQUESTS,
  );
}

/** The promise's value, or a rejection once `ms` passed without one. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
