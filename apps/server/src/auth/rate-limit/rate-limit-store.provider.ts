import type { FactoryProvider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { RateLimitCounterRepository } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { PostgresRateLimitStore } from './postgres-rate-limit-store';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit-store';
import { RedisRateLimitStore } from './redis-rate-limit-store';

/** Redis when REDIS_URL is set (less load on the database per request), else the database every deployment has. */
export const rateLimitStoreProvider: FactoryProvider<RateLimitStore> = {
  provide: RATE_LIMIT_STORE,
  inject: [APP_CONFIG, RateLimitCounterRepository, PinoLogger],
  useFactory: (config: AppConfig, counters: RateLimitCounterRepository, logger: PinoLogger): RateLimitStore => {
    logger.setContext('RateLimitStore');
    return config.redisUrl === undefined ? new PostgresRateLimitStore(counters, logger) : new RedisRateLimitStore({ url: config.redisUrl }, logger);
  },
};
