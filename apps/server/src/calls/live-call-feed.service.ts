import { BeforeApplicationShutdown, HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { CallRepository } from '@switchboard/persistence';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';

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
/** Open feeds per organization in this process: each polls the database once a second. */
export const LIVE_FEEDS_PER_ORGANIZATION = 10;
const ROWS_PER_POLL = 200;

interface OpenFeed {
  organizationId: string;
  end(): void;
}

/**
 * `GET /v1/calls/live`: the organization's calls as they change, as server-sent events (`event:
 * call`, the call as GET /v1/calls lists it). Polling the calls table rather than listening inside
 * this process means every change is seen, whichever worker or instance made it.
 */
@Injectable()
export class LiveCallFeedService implements BeforeApplicationShutdown {
  private readonly feeds = new Set<OpenFeed>();

  constructor(
    private readonly calls: CallRepository,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(LiveCallFeedService.name);
  }

  open(organizationId: string, response: Response, now = new Date()): void {
    const open = [...this.feeds].filter((feed) => feed.organizationId === organizationId).length;
    if (open >= LIVE_FEEDS_PER_ORGANIZATION) {
      throw new HttpException(
        { statusCode: 429, error: 'Too Many Requests', code: 'too_many_live_feeds', message: `At most ${LIVE_FEEDS_PER_ORGANIZATION} live call feeds per organization at once; close one first.` },
        HttpStatus.TOO_MANY_REQUESTS,
      );
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

    const poller = setInterval(() => void poll(), LIVE_FEED_POLL_MS);
    const heartbeat = setInterval(() => response.write(`: keep-alive\n\n`), HEARTBEAT_MS);
    const expiry = setTimeout(() => feed.end(), LIVE_FEED_MAX_MS);
    const feed: OpenFeed = {
      organizationId,
      end: () => {
        clearInterval(poller);
        clearInterval(heartbeat);
        clearTimeout(expiry);
        this.feeds.delete(feed);
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
   * (clients reconnect, to another instance if this one is going away).
   */
  beforeApplicationShutdown(): void {
    for (const feed of [...this.feeds]) feed.end();
  }
}
