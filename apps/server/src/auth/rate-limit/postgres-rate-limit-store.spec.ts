import { RATE_LIMIT_CLEANUP_MAX_BATCH, type RateLimitCounterRepository } from '@switchboard/persistence';
import { PostgresRateLimitStore } from './postgres-rate-limit-store';

function setUp(deleteExpired: jest.Mock) {
  const counters = { hit: jest.fn(), deleteExpired } as unknown as RateLimitCounterRepository;
  const logger = { warn: jest.fn() };
  return { store: new PostgresRateLimitStore(counters, logger, 1_000), logger };
}

describe('PostgresRateLimitStore cleanup', () => {
  afterEach(() => jest.useRealTimers());

  it('deletes in batches while they come back full, at most 10 per round', async () => {
    const deleteExpired = jest.fn().mockResolvedValueOnce(RATE_LIMIT_CLEANUP_MAX_BATCH).mockResolvedValueOnce(3);
    await expect(setUp(deleteExpired).store.cleanUp()).resolves.toBe(RATE_LIMIT_CLEANUP_MAX_BATCH + 3);
    const endless = jest.fn().mockResolvedValue(RATE_LIMIT_CLEANUP_MAX_BATCH);
    await setUp(endless).store.cleanUp();
    expect(endless).toHaveBeenCalledTimes(10);
  });

  it('logs a failed round instead of throwing', async () => {
    const { store, logger } = setUp(jest.fn().mockRejectedValue(new Error('connection terminated')));
    await expect(store.cleanUp()).resolves.toBe(0);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it('runs on a timer from module init until module destroy', async () => {
    jest.useFakeTimers();
    const deleteExpired = jest.fn().mockResolvedValue(0);
    const { store } = setUp(deleteExpired);
    store.onModuleInit();
    await jest.advanceTimersByTimeAsync(2_500);
    expect(deleteExpired).toHaveBeenCalledTimes(2);
    await store.onModuleDestroy();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(deleteExpired).toHaveBeenCalledTimes(2);
  });
});
