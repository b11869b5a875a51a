import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeMulaw, encodeMulaw, sineTone } from '@switchboard/audio';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { FakeTwilioRestServer, freeLoopbackPort } from '@switchboard/testing';
import { Client } from 'pg';
import { ALL_AGENTS_BUSY_MESSAGE } from '../../apps/server/src/twilio/webhooks/inbound-call.service';
import { createOtherOrganizationKey, createRepositories, createScratchDatabase, createTestPrisma, type ScratchDatabase } from '../support/database';
import { HaproxyProcess } from '../support/haproxy';
import { sumOf } from '../support/prometheus-text';
import { isVoicedFrame, RollingCallers, type PlacedCall } from '../support/rolling-callers';
import { ServerFleet, type DrainRecord } from '../support/server-fleet';
import { bindTenantNumber, connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, TEST_ADMIN_API_KEY, TEST_SECRETS_ENCRYPTION_KEY, type TestServer } from '../support/test-server';
import { WebhookReceiver } from '../support/webhook-receiver';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';

/**
 * The deployment operators run beyond one machine, from outside: Debian's HAProxy with the shipped
 * docker/haproxy/haproxy.cfg in front of three server processes (main.ts each) sharing one real
 * Postgres. 60 simulated Twilio callers phone through HAProxy over and over (signed webhooks and
 * media sockets), while every instance in turn is sent SIGTERM, drains, exits and is started
 * again. Then: no call was cut, every call has its record and its ledger, every webhook event
 * reached the business once, an organization's concurrency limit held although its calls landed
 * on different instances, and the instances' /metrics summed to the calls live.
 */
const INSTANCES = 3;
const CALLERS = 60;
const LIMITED_ORG_LIMIT = 6;
const LIMITED_ORG_ATTEMPTS = 10;
const CALL_EVENTS = ['call.started', 'call.ended', 'call.cost'] as const;
const HOLD_TONE = encodeMulaw(sineTone({ frequencyHz: 330, durationMs: 2000, sampleRate: 8000, amplitudeDbfs: -12 }));

describe('several instances behind HAProxy, restarted one by one while calls go on (e2e)', () => {
  const receiver = new WebhookReceiver();
  let twilio: FakeTwilioRestServer;
  let database: ScratchDatabase;
  let prisma: PrismaService;
  let fleet: ServerFleet;
  let haproxy: HaproxyProcess;
  let dataDir: string;
  let apiKey: string;
  let account: TenantTwilioAccount;
  let number: string;
  let limitedOrg: { apiKey: string; account: TenantTwilioAccount; number: string };

  /** The API as a business reaches it: through the load balancer. */
  const viaLoadBalancer: Pick<TestServer, 'api'> = {
    api: async (path, init = {}) => {
      const headers: Record<string, string> = init.apiKey ? { authorization: `Bearer ${init.apiKey}` } : {};
      if (init.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${haproxy.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
  };
  const api = viaLoadBalancer.api;

  /** An organization of its own with an echo agent on a number of its Twilio account. */
  async function organizationLine(label: string) {
    const key = await createOtherOrganizationKey(createRepositories(prisma), label);
    const agent = await api('/v1/agents', { apiKey: key, method: 'POST', body: { name: `${label}-echo`, engine: 'echo' } });
    expect(agent.status).toBe(201);
    const orgAccount = await connectTwilioAccount(viaLoadBalancer, key, twilio);
    return { apiKey: key, account: orgAccount, number: await bindTenantNumber(viaLoadBalancer, key, twilio, orgAccount, agent.body.id) };
  }

  beforeAll(async () => {
    await receiver.start();
    twilio = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    database = await createScratchDatabase('multi_instance');
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-fleet-'));
    // HAProxy's address is the public one (Twilio signs requests over it) and its configuration
    // names the instances' ports: the ports are chosen first, HAProxy started, then the instances.
    const ports = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()] as const;
    haproxy = await HaproxyProcess.start(ports);
    const publicBaseUrl = haproxy.url;
    fleet = await ServerFleet.start([...ports], (port) => ({
      PORT: String(port),
      PUBLIC_BASE_URL: publicBaseUrl,
      DATABASE_URL: database.url,
      // Every instance migrates at start, as each would in a rolling deploy (Prisma takes a lock).
      MIGRATE_ON_START: 'true',
      DATA_DIR: join(dataDir, String(port)),
      ADMIN_API_KEY: TEST_ADMIN_API_KEY,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_ENCRYPTION_KEY,
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_API_BASE_URL: twilio.baseUrl,
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      // HAProxy adds X-Forwarded-For: believed from it alone, as the README tells operators to set.
      TRUST_PROXY: '127.0.0.1',
      MAX_CONCURRENT_CALLS_PER_ORG: '200',
      RATE_LIMIT_REQUESTS: '1000000',
      RATE_LIMIT_ANONYMOUS_REQUESTS: '1000000',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      DRAIN_TIMEOUT_S: '60',
      WORKERS: '1',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    }));
    for (const instance of fleet.instances) await haproxy.waitForStatus(instance.name, 'UP', 15_000);
    prisma = createTestPrisma(2, database.url);

    ({ apiKey, account, number } = await organizationLine('fleet'));
    const subscription = await api('/v1/webhook-subscriptions', { apiKey, method: 'POST', body: { url: receiver.url, events: CALL_EVENTS } });
    expect(subscription.status).toBe(201);
    receiver.secret = subscription.body.secret;
    limitedOrg = await organizationLine('fleet-limited');
    expect((await api('/v1/organization', { apiKey: limitedOrg.apiKey, method: 'PATCH', body: { maxConcurrentCalls: LIMITED_ORG_LIMIT } })).status).toBe(200);
  }, 300_000);

  afterAll(async () => {
    await fleet?.stopAll();
    await haproxy?.stop();
    await twilio?.close();
    await receiver.stop();
    await prisma?.$disconnect();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('drops no call, loses no record, delivers each webhook once and keeps the limit while every instance is rolled', async () => {
    const figures: Figures = { calls: [], cut: [], failed: [], drains: [], liveByInstance: [], limitProbe: null, webhookDuplicates: null, webhooksReceived: 0 };
    try {
      await rollWhileCalling(figures);
    } finally {
      printFigures(figures);
    }
  }, 600_000);

  async function rollWhileCalling(figures: Figures): Promise<void> {
    const callers = new RollingCallers({ url: haproxy.url, number, account }, CALLERS);
    figures.calls = callers.calls;
    callers.start();

    // All 60 first calls live at once: each instance's /metrics counts its own, and they sum to 60.
    await callers.allFirstCallsConnected();
    expect(callers.calls.filter((call) => call.error !== null || call.rejected)).toEqual([]);
    figures.liveByInstance = await eventually(
      () => Promise.all(fleet.instances.map((instance) => liveCallsOn(instance.port))),
      (counts) => counts.reduce((sum, count) => sum + count, 0) === CALLERS,
      10_000,
    );
    expect(figures.liveByInstance.reduce((sum, count) => sum + count, 0)).toBe(CALLERS);
    expect(await liveCallsInDatabase()).toBe(CALLERS);
    // HAProxy spread the media sockets: every instance carries calls.
    for (const count of figures.liveByInstance) expect(count).toBeGreaterThan(0);
    callers.releaseFirstCalls();

    // Roll: each instance in turn drains (new calls keep arriving) and comes back.
    for (const instance of fleet.instances) {
      const drain = await fleet.drain(instance.name, 90_000, async () => {
        await haproxy.waitForStatus(instance.name, 'DOWN', 10_000);
        // While one instance drains, the limited organization's callers arrive all at once on the others.
        if (instance.name === 'app2') figures.limitProbe = await probeLimit();
      });
      figures.drains.push(drain);
      await fleet.restart(instance.name);
      await haproxy.waitForStatus(instance.name, 'UP', 15_000);
    }
    await callers.stop();
    const calls = callers.calls;
    figures.cut = calls.filter((call) => callWasCut(call));
    figures.failed = calls.filter((call) => call.error !== null);

    expect(figures.failed.map((call) => call.error)).toEqual([]);
    expect(calls.filter((call) => call.rejected)).toEqual([]);
    expect(figures.cut.map(describeCall)).toEqual([]);
    for (const drain of figures.drains) {
      expect(drain.exitCode).toBe(0);
      // Every drain had calls to wait for, and none needed the message at the bound.
      expect(drain.callsAtStart).toBeGreaterThan(0);
      expect(drain.endedWithMessage).toBe(0);
    }

    // Every call: ended by the caller's hang-up, with its record and a ledger that adds up.
    const callIds = calls.map((call) => call.callId!);
    const records = await eventually(() => callRecords(callIds), (rows) => rows.length === callIds.length && rows.every((row) => row.priced), 20_000);
    expect(records).toHaveLength(calls.length);
    for (const record of records) {
      expect(record).toMatchObject({ end_reason: 'stream_stopped', priced: true });
      expect(record.ended_at).not.toBeNull();
      expect(record.duration_seconds).not.toBeNull();
      expect(record.ledger_lines).toBeGreaterThan(0);
      expect(record.ledger_total).toBe(record.cost_total);
    }

    // Every event the fleet wrote reached the business once, and none is missing.
    const expectedEvents = calls.length * CALL_EVENTS.length;
    await eventually(async () => receiver.received.length, (count) => count >= expectedEvents, 60_000);
    await eventually(undeliveredEvents, (pending) => pending === 0, 10_000);
    figures.webhooksReceived = receiver.received.length;
    const byId = new Map<string, number>();
    for (const request of receiver.received) byId.set(request.id, (byId.get(request.id) ?? 0) + 1);
    figures.webhookDuplicates = [...byId.values()].filter((count) => count > 1).length;
    expect(figures.webhookDuplicates).toBe(0);
    expect(receiver.received.every((request) => request.signatureValid)).toBe(true);
    for (const type of CALL_EVENTS) {
      const ofType = receiver.received.filter((request) => request.type === type && (type !== 'call.cost' || request.body.data.kind === 'charge'));
      expect(new Set(ofType.map((request) => request.body.data.callId))).toEqual(new Set(callIds));
      expect(ofType).toHaveLength(calls.length);
    }

    // The limited organization: exactly its limit admitted across instances, the rest turned away politely.
    const probe = figures.limitProbe;
    expect(probe).not.toBeNull();
    expect(probe!.admitted).toBe(LIMITED_ORG_LIMIT);
    expect(probe!.refusedMessages).toEqual(Array(LIMITED_ORG_ATTEMPTS - LIMITED_ORG_LIMIT).fill(ALL_AGENTS_BUSY_MESSAGE));
    expect(probe!.maxOverlapInDatabase).toBeLessThanOrEqual(LIMITED_ORG_LIMIT);
  }

  /** LIMITED_ORG_ATTEMPTS calls to the limited organization at once; the admitted ones hold 2 s, then hang up. */
  async function probeLimit(): Promise<LimitProbe> {
    const attempts = Array.from({ length: LIMITED_ORG_ATTEMPTS }, (_, index) =>
      new SimulatedTwilioCall({ serverUrl: haproxy.url, ...limitedOrg.account, from: `+1555800${String(index).padStart(4, '0')}`, to: limitedOrg.number }),
    );
    const twimls = await Promise.all(attempts.map((call) => call.dial()));
    const admitted = attempts.filter((_, index) => !twimls[index]!.rejected);
    await Promise.all(
      admitted.map(async (call) => {
        await call.connectMedia();
        await call.streamAudio(HOLD_TONE, { trailingSilenceMs: 200 });
        await call.hangup();
      }),
    );
    return {
      admitted: admitted.length,
      refusedMessages: twimls.filter((twiml) => twiml.rejected).map((twiml) => twiml.sayText),
      maxOverlapInDatabase: await maxOverlap(limitedOrg.number),
    };
  }

  async function query<T extends object>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  async function liveCallsInDatabase(): Promise<number> {
    const [row] = await query<{ live: string }>(`SELECT count(*) AS live FROM calls WHERE to_number = $1 AND ended_at IS NULL AND stream_started_at IS NOT NULL`, [number]);
    return Number(row!.live);
  }

  async function callRecords(callIds: string[]) {
    return query<{ id: string; end_reason: string | null; ended_at: Date | null; duration_seconds: number | null; priced: boolean; ledger_lines: number; ledger_total: string; cost_total: string }>(
      `SELECT c.id, c.end_reason, c.ended_at, c.duration_seconds, cc.call_id IS NOT NULL AS priced,
              (SELECT count(*)::int FROM cost_ledger_lines l WHERE l.call_id = c.id) AS ledger_lines,
              (SELECT coalesce(sum(l.amount_micros), 0)::text FROM cost_ledger_lines l WHERE l.call_id = c.id) AS ledger_total,
              coalesce(cc.total_micros, 0)::text AS cost_total
         FROM calls c LEFT JOIN call_costs cc ON cc.call_id = c.id
        WHERE c.id = ANY($1::uuid[])`,
      [callIds],
    );
  }

  async function undeliveredEvents(): Promise<number> {
    const [row] = await query<{ pending: string }>(`SELECT count(*) AS pending FROM webhook_deliveries WHERE status <> 'delivered'`);
    return Number(row!.pending);
  }

  /** The most calls of `toNumber` that were live at one moment, from their records. */
  async function maxOverlap(toNumber: string): Promise<number> {
    const [row] = await query<{ overlap: number | null }>(
      `SELECT max(live)::int AS overlap FROM (
         SELECT sum(delta) OVER (ORDER BY at, delta) AS live FROM (
           SELECT started_at AS at, 1 AS delta FROM calls WHERE to_number = $1 AND end_reason IS DISTINCT FROM 'concurrency_limit'
           UNION ALL
           SELECT coalesce(ended_at, now()), -1 FROM calls WHERE to_number = $1 AND end_reason IS DISTINCT FROM 'concurrency_limit'
         ) edges
       ) running`,
      [toNumber],
    );
    return row?.overlap ?? 0;
  }
});

/** The live-calls gauge of one instance, read on its own address as Prometheus would scrape it. */
async function liveCallsOn(port: number): Promise<number> {
  return sumOf(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), 'switchboard_live_calls');
}

/**
 * Cut: the server closed the call, or the echo (the echo agent plays back what it hears, through
 * the same 8k->16k->8k resampling as any agent) lost some of the caller's speech: every 20 ms frame
 * of the tone the caller sent must come back as a frame of tone (the resampler may smear one more).
 * Each caller waits for the echo of its last words (up to 5 s) before it hangs up, so a loaded
 * machine's lag is reported (the longest wait) rather than counted as a loss; what is lost never
 * comes back, however long it waits.
 */
function callWasCut(call: PlacedCall): boolean {
  const result = call.result;
  if (call.rejected || call.error !== null || result === null) return false;
  return result.closedBy !== 'caller' || voicedFrames(result.received) < voicedFrames(decodeMulaw(result.sentMulaw));
}

/** 20 ms frames (160 samples at 8 kHz) that carry the tone rather than silence. */
function voicedFrames(samples: Int16Array): number {
  let voiced = 0;
  for (let start = 0; start + 160 <= samples.length; start += 160) if (isVoicedFrame(samples.subarray(start, start + 160))) voiced++;
  return voiced;
}

function describeCall(call: PlacedCall) {
  const result = call.result;
  return { slot: call.slot, callId: call.callId, closedBy: result?.closedBy, closeCode: result?.closeCode, bytesSent: result?.sentMulaw.length, bytesReceived: result?.receivedMulaw.length, voicedSent: result && voicedFrames(decodeMulaw(result.sentMulaw)), voicedReceived: result && voicedFrames(result.received) };
}

interface LimitProbe {
  admitted: number;
  refusedMessages: string[];
  maxOverlapInDatabase: number;
}

interface Figures {
  calls: PlacedCall[];
  cut: PlacedCall[];
  failed: PlacedCall[];
  drains: DrainRecord[];
  liveByInstance: number[];
  limitProbe: LimitProbe | null;
  webhooksReceived: number;
  /** Webhook ids the business received more than once; null until the webhooks were counted. */
  webhookDuplicates: number | null;
}

/** The run's figures as a table and one JSON line, printed whether the test passed or not. */
function printFigures(figures: Figures) {
  const tenths = (seconds: number) => Math.round(seconds * 10) / 10;
  const summary = {
    instances: INSTANCES,
    callers: CALLERS,
    callsPlaced: figures.calls.length,
    callsCut: figures.cut.length,
    callerErrors: figures.failed.length,
    liveCallsByInstanceAtPeak: figures.liveByInstance,
    maxDrainSeconds: figures.drains.length === 0 ? null : tenths(Math.max(...figures.drains.map((drain) => drain.seconds))),
    drains: figures.drains.map((drain) => ({ instance: drain.instance, seconds: tenths(drain.seconds), callsAtStart: drain.callsAtStart })),
    /** The longest a caller waited, after its trailing silence, for the echo of its last words. */
    maxEchoWaitMs: Math.round(Math.max(0, ...figures.calls.map((call) => call.echoWaitMs ?? 0))),
    webhooksReceived: figures.webhooksReceived,
    webhookDuplicatesById: figures.webhookDuplicates,
    limitedOrg: figures.limitProbe && { limit: LIMITED_ORG_LIMIT, attempts: LIMITED_ORG_ATTEMPTS, admitted: figures.limitProbe.admitted, refused: figures.limitProbe.refusedMessages.length },
  };
  const rows = [
    ['calls placed', String(summary.callsPlaced)],
    ['calls cut', String(summary.callsCut)],
    ['caller errors', String(summary.callerErrors)],
    ['live calls per instance, all callers on (/metrics)', summary.liveCallsByInstanceAtPeak.join(' + ')],
    ...summary.drains.map((drain) => [`drain of ${drain.instance} (calls live at SIGTERM)`, `${drain.seconds} s (${drain.callsAtStart})`]),
    ['max drain time', summary.maxDrainSeconds === null ? '-' : `${summary.maxDrainSeconds} s`],
    ['longest wait for the echo after 600 ms of silence', `${summary.maxEchoWaitMs} ms`],
    ['webhooks received / duplicates by id', `${summary.webhooksReceived} / ${summary.webhookDuplicatesById ?? 'not counted'}`],
    ['limited organization: admitted / attempts', summary.limitedOrg ? `${summary.limitedOrg.admitted} / ${summary.limitedOrg.attempts} (limit ${LIMITED_ORG_LIMIT})` : 'not run'],
  ];
  const width = Math.max(...rows.map(([label]) => label!.length));
  process.stdout.write(`\nmulti-instance rolling restart (${INSTANCES} instances behind HAProxy, ${CALLERS} callers)\n${rows.map(([label, value]) => `  ${label!.padEnd(width)}  ${value}`).join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ multiInstance: summary })}\n`);
}
