import { EventEmitter } from 'node:events';
import { HttpException } from '@nestjs/common';
import type { CallRepository } from '@switchboard/persistence';
import type { Response } from 'express';
import type { PinoLogger } from 'nestjs-pino';
import { LIVE_FEED_LEASE_TTL_MS, LIVE_FEEDS_PER_ORGANIZATION, LiveCallFeedService } from './live-call-feed.service';
import type { LiveFeedLeaseStore } from './live-feed-leases/live-feed-lease-store';

const ORG = '00000000-0000-4000-8000-0000000000aa';

/** The store's contract in memory, as every process would share it. */
class InMemoryLeases implements LiveFeedLeaseStore {
  readonly backend = 'postgres';
  readonly held = new Map<string, string>();
  renewals = 0;
  renewAnswer = true;

  async acquire(organizationId: string, leaseId: string, limit: number): Promise<boolean> {
    if ([...this.held.values()].filter((org) => org === organizationId).length >= limit) return false;
    this.held.set(leaseId, organizationId);
    return true;
  }
  async renew(): Promise<boolean> {
    this.renewals += 1;
    return this.renewAnswer;
  }
  async release(_organizationId: string, leaseId: string): Promise<void> {
    this.held.delete(leaseId);
  }
}

function fakeResponse(): Response & EventEmitter {
  const response = new EventEmitter() as Response & EventEmitter & { writableEnded: boolean };
  response.writableEnded = false;
  Object.assign(response, {
    writeHead: jest.fn(),
    write: jest.fn(),
    end: jest.fn(() => (response.writableEnded = true)),
  });
  return response;
}

function setUp(store: LiveFeedLeaseStore) {
  const calls = { listUpdatedSince: jest.fn().mockResolvedValue([]) } as unknown as CallRepository;
  const logger = { setContext: jest.fn(), warn: jest.fn() };
  return { service: new LiveCallFeedService(calls, store, logger as unknown as PinoLogger), logger };
}

async function status(opening: Promise<void>): Promise<number> {
  return opening.then(
    () => 200,
    (error: unknown) => (error instanceof HttpException ? error.getStatus() : 500),
  );
}

describe('LiveCallFeedService leases', () => {
  afterEach(() => jest.useRealTimers());

  it('refuses a feed the shared store refuses, though this process holds none', async () => {
    const leases = new InMemoryLeases();
    // Another process already holds the organization's places.
    for (let i = 0; i < LIVE_FEEDS_PER_ORGANIZATION; i++) leases.held.set(`elsewhere-${i}`, ORG);
    const { service } = setUp(leases);
    expect(await status(service.open(ORG, fakeResponse()))).toBe(429);
    expect(service.openFeeds).toBe(0);
  });

  it('releases the lease when the feed closes, and when the client left while it was taken', async () => {
    const leases = new InMemoryLeases();
    const { service } = setUp(leases);
    const response = fakeResponse();
    await service.open(ORG, response);
    expect(leases.held.size).toBe(1);
    response.emit('close');
    await service.beforeApplicationShutdown();
    expect(leases.held.size).toBe(0);

    const leaving = fakeResponse();
    const opening = service.open(ORG, leaving);
    leaving.emit('close');
    await opening;
    await service.beforeApplicationShutdown();
    expect(leaving.writeHead).not.toHaveBeenCalled();
    expect(leases.held.size).toBe(0);
    expect(service.openFeeds).toBe(0);
  });

  it('renews the lease while the feed is open, and ends the feed once its lease expired', async () => {
    jest.useFakeTimers();
    const leases = new InMemoryLeases();
    const { service } = setUp(leases);
    const response = fakeResponse();
    await service.open(ORG, response);
    await jest.advanceTimersByTimeAsync(LIVE_FEED_LEASE_TTL_MS);
    expect(leases.renewals).toBeGreaterThanOrEqual(2);
    expect(response.end).not.toHaveBeenCalled();
    leases.renewAnswer = false;
    await jest.advanceTimersByTimeAsync(LIVE_FEED_LEASE_TTL_MS);
    expect(response.end).toHaveBeenCalled();
    expect(service.openFeeds).toBe(0);
  });

  it("counts this process's feeds alone while the store is down, rather than refusing every feed", async () => {
    const down: LiveFeedLeaseStore = { backend: 'redis', acquire: () => Promise.reject(new Error('ECONNREFUSED')), renew: jest.fn(), release: jest.fn() };
    const { service, logger } = setUp(down);
    for (let i = 0; i < LIVE_FEEDS_PER_ORGANIZATION; i++) expect(await status(service.open(ORG, fakeResponse()))).toBe(200);
    expect(await status(service.open(ORG, fakeResponse()))).toBe(429);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    await service.beforeApplicationShutdown();
    expect(down.release).not.toHaveBeenCalled();
  });
});
