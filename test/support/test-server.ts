import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadAppConfig } from '@switchboard/config';
import { type CallResult, placeCall, type PlaceCallOptions } from '@switchboard/simulated-caller';
import type { DestinationStream } from 'pino';
import { createServerApp } from '../../apps/server/src/server-app';
import { apiRequest } from './api-request';
import { testDatabaseUrl, uniqueE164 } from './database';

// Specs import it from here beside the server; it lives apart so specs without a server use it too.
export { eventually } from './eventually';

/**
 * The real server, booted in-process exactly as main.ts does (same module graph, adapters,
 * parsers), on a free port, against the run's test database.
 */
export interface TestServer {
  app: NestExpressApplication;
  /** Where the server really listens, e.g. http://127.0.0.1:41234. */
  serverUrl: string;
  /** What Twilio is configured with (signatures cover it); deliberately not the local address. */
  publicBaseUrl: string;
  authToken: string;
  accountSid: string;
  adminApiKey: string;
  /** Bound to the built-in echo agent at start-up. */
  echoNumber: string;
  /**
   * Calls `echoNumber` with the simulated Twilio caller, which hangs up once every frame it sent
   * has been echoed (`awaitEchoMs`, 5 s at most unless set).
   */
  callEcho(options: Omit<PlaceCallOptions, 'serverUrl' | 'publicBaseUrl' | 'authToken' | 'accountSid' | 'to' | 'from'> & { from?: string }): Promise<CallResult>;
  /** Calls a /v1 route with the admin key (GET unless `method` says otherwise; `body` is sent as JSON). */
  api(path: string, init?: { apiKey?: string | null; method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; body?: unknown }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export const TEST_ADMIN_API_KEY = 'sk_test_switchboard_e2e_admin_key_000000';
/** One sealing key for every test server of the run: they share the database, and so its secrets. */
export const TEST_SECRETS_ENCRYPTION_KEY = Buffer.alloc(32, 42).toString('base64');

/**
 * `beforeListen` runs on the built app before its lifecycle hooks and workers start (e.g. to set the
 * server's Clock before its campaign dialer's first tick).
 */
export async function startTestServer(
  env: Record<string, string | undefined> = {},
  options: { logDestination?: DestinationStream; beforeListen?: (app: NestExpressApplication) => void } = {},
): Promise<TestServer> {
  const publicBaseUrl = 'https://switchboard.test';
  // A test may fix Twilio's credentials (e.g. to share them with a fake of Twilio's REST API).
  const authToken = env['TWILIO_AUTH_TOKEN'] ?? randomBytes(16).toString('hex');
  const accountSid = env['TWILIO_ACCOUNT_SID'] ?? `AC${randomBytes(16).toString('hex')}`;
  // One admin key for every test server of the run: they share the default organization, and a
  // server booting with a different ADMIN_API_KEY revokes the previous bootstrap key (by design).
  const adminApiKey = env['ADMIN_API_KEY'] ?? TEST_ADMIN_API_KEY;
  const echoNumber = uniqueE164();
  // Each server keeps its recordings in a folder of its own, removed when it closes (never the checkout's ./data).
  const recordingsDir = mkdtempSync(join(tmpdir(), 'switchboard-recordings-'));
  const config = loadAppConfig({
    NODE_ENV: 'test',
    PORT: '0',
    PUBLIC_BASE_URL: publicBaseUrl,
    TWILIO_ACCOUNT_SID: accountSid,
    TWILIO_AUTH_TOKEN: authToken,
    DATABASE_URL: testDatabaseUrl(),
    // global-setup migrated the run's database once; the embedded-database test turns this back on.
    MIGRATE_ON_START: env['DATABASE_URL'] === '' ? 'true' : 'false',
    ADMIN_API_KEY: adminApiKey,
    ECHO_AGENT_NUMBER: echoNumber,
    LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent',
    // Test files running in parallel share the default organization: its calls must not run into
    // the concurrency limit (tests of the limit use an organization of their own).
    MAX_CONCURRENT_CALLS_PER_ORG: '1000',
    MAX_CONCURRENT_CALLS_CAP: '1000',
    // Every e2e server shares the admin key, the client address and (now) the rate-limit counters
    // in the database: only the rate-limit specs, with their own numbers, should ever meet a limit.
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_ANONYMOUS_REQUESTS: '1000000',
    SECRETS_ENCRYPTION_KEY: TEST_SECRETS_ENCRYPTION_KEY,
    // The fakes (OpenAI-compatible servers, business endpoints, webhook receivers) listen on
    // loopback; the tests of the outbound guard itself start a server without this.
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    // Test servers share one database: a reconciler in each would end other tests' calls. The
    // reconciler's own tests turn it on (or run a pass themselves).
    CALL_RECONCILE_INTERVAL_MS: '0',
    // Every e2e server shares one database and a webhook worker claims due deliveries of ANY
    // organization: only the spec that tests delivery (with its own timings) turns it on.
    WEBHOOK_WORKER_ENABLED: 'false',
    RECORDINGS_DIR: recordingsDir,
    // The analysis worker, like the webhook worker, takes any organization's queued jobs: only the
    // analysis spec turns it on.
    ANALYSIS_WORKER_ENABLED: 'false',
    // The campaign dialer, likewise, dials any organization's campaigns: only the campaigns spec,
    // on a database of its own, turns it on.
    CAMPAIGN_DIALER_ENABLED: 'false',
    ...env,
  });
  const app = await createServerApp(config, options);
  options.beforeListen?.(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const serverUrl = `http://127.0.0.1:${port}`;

  return {
    app,
    serverUrl,
    publicBaseUrl,
    authToken,
    accountSid,
    adminApiKey,
    echoNumber,
    callEcho: (options) =>
      placeCall({ from: '+15550001111', awaitEchoMs: 5_000, ...options, serverUrl, publicBaseUrl, authToken, accountSid, to: echoNumber }),
    api: (path, init = {}) => apiRequest(serverUrl, path, { ...init, apiKey: init.apiKey === undefined ? adminApiKey : init.apiKey }),
    close: async () => {
      await app.close();
      rmSync(recordingsDir, { recursive: true, force: true });
    },
  };
}
