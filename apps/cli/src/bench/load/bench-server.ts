import { randomBytes } from 'node:crypto';
import { freeLoopbackPort } from '@switchboard/testing';
import type { CallTarget } from './scaled-call';

/** The built server a bench starts: where it listens and the credentials its callers and API clients use. */
export interface BenchServerIdentity {
  port: number;
  baseUrl: string;
  adminApiKey: string;
  operatorKey: string;
  authToken: string;
  accountSid: string;
}

/** Fresh credentials and a free loopback port, per server process. */
export async function newBenchServerIdentity(): Promise<BenchServerIdentity> {
  const port = await freeLoopbackPort();
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    adminApiKey: randomBytes(24).toString('hex'),
    operatorKey: randomBytes(24).toString('hex'),
    authToken: randomBytes(16).toString('hex'),
    accountSid: `AC${randomBytes(16).toString('hex')}`,
  };
}

/**
 * The environment every bench starts the server with: its identity, a data folder of its own, the
 * fake engines on loopback allowed, and the per-organization and rate limits lifted, so the bench
 * measures the calls and not the guards. `extra` adds the bench's own settings.
 */
export function benchServerEnv(identity: BenchServerIdentity, dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PUBLIC_BASE_URL: identity.baseUrl,
    TWILIO_ACCOUNT_SID: identity.accountSid,
    TWILIO_AUTH_TOKEN: identity.authToken,
    ADMIN_API_KEY: identity.adminApiKey,
    OPERATOR_API_KEY: identity.operatorKey,
    DATA_DIR: dataDir,
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    MAX_CONCURRENT_CALLS_CAP: '10000',
    MAX_CONCURRENT_CALLS_PER_ORG: '10000',
    RATE_LIMIT_REQUESTS: '1000000',
    RATE_LIMIT_ANONYMOUS_REQUESTS: '1000000',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** One API request to the bench's server (GET, or POST with a JSON body); a non-2xx answer throws with its body. */
export async function benchApi(baseUrl: string, apiKey: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const parsed = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(parsed)}`);
  return parsed;
}

/** Creates the bench's pipeline agent on a number of its own: what the simulated callers dial. */
export async function benchLine(identity: BenchServerIdentity, agent: { name: string; config: object }, number: string): Promise<CallTarget> {
  const created = await benchApi(identity.baseUrl, identity.adminApiKey, '/v1/agents', { name: agent.name, engine: 'pipeline', config: agent.config });
  await benchApi(identity.baseUrl, identity.adminApiKey, '/v1/phone-numbers', { e164: number, agentId: created['id'] });
  return { serverUrl: identity.baseUrl, publicBaseUrl: identity.baseUrl, authToken: identity.authToken, accountSid: identity.accountSid, to: number };
}
