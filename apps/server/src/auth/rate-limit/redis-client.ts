import Redis from 'ioredis';
import type { PinoLogger } from 'nestjs-pino';
import { ThrottledWarning } from './throttled-warning';

export interface SharedStateRedisOptions {
  url: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

// A check waits on Redis for at most this long: past it, the caller falls back.
const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 500;
const DISCONNECT_TIMEOUT_MS = 500;
const ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * A client for state every process shares (REDIS_URL): connects on first use, gives up on a
 * command quickly (commandTimeout, one retry) and keeps reconnecting in the background, logging a
 * failed connection at most every 30 s.
 */
export function sharedStateRedis(options: SharedStateRedisOptions, logger: Pick<PinoLogger, 'warn'>, purpose: string): Redis {
  const connectionWarning = new ThrottledWarning(logger, ERROR_LOG_INTERVAL_MS);
  const redis = new Redis(options.url, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // ioredis arms this timer even for a socket that is already closed (Redis was down), and it
    // would hold up the process's exit for its default 2 s.
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
  });
  // Without a listener ioredis prints every failed reconnection to stderr.
  redis.on('error', (error) => connectionWarning.warn(error, `Redis (${purpose}) connection failed`));
  return redis;
}

/** QUIT lets queued replies arrive; a connection that is not up is simply dropped. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit().catch(() => redis.disconnect());
}
