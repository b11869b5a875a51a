import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { computeTwilioSignature, newSid, SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { freeLoopbackPort } from '@switchboard/testing';
import { FreezableTcpProxy } from '../support/freezable-tcp-proxy';
import { BuiltServer } from '../support/built-server';
import { testDatabaseUrl, isEmbeddedTestDatabase } from '../support/database';

/**
 * The server as operators run it (its own process, main.ts), in front of a database that stops
 * answering: connections stay open, nothing comes back. Found at 250 concurrent calls: voice
 * webhooks answered 500, then the server wedged and SIGTERM did not stop it. Now a caller is declined
 * politely well inside Twilio's 15 s webhook timeout, and SIGTERM exits within SHUTDOWN_TIMEOUT_MS.
 */
const AUTH_TOKEN = 'wedge-test-auth-token-0123456789';
const ECHO_NUMBER = '+15550001313';
const SHUTDOWN_TIMEOUT_MS = 4000;
const describeReal = isEmbeddedTestDatabase() ? describe.skip : describe;


describeReal('A database that stops answering (e2e, the server in its own process)', () => {
  let proxy: FreezableTcpProxy;
  let child: ChildProcess;
  let baseUrl: string;
  let dataDir: string;
  let server: BuiltServer;

  beforeAll(async () => {
    const target = new URL(testDatabaseUrl());
    proxy = await FreezableTcpProxy.start(target.hostname, Number(target.port || 5432));
    const proxied = new URL(testDatabaseUrl());
    proxied.host = `127.0.0.1:${proxy.port}`;
    const port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-wedge-'));
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DATABASE_URL: proxied.toString(),
      MIGRATE_ON_START: 'false',
      DATABASE_POOL_MAX: '2',
      DATA_DIR: dataDir,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      ECHO_AGENT_NUMBER: ECHO_NUMBER,
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      // SIGTERM's drain (drain.e2e-spec.ts) is off: this test is about the shutdown bound that follows it.
      DRAIN_TIMEOUT_S: '0',
      WORKERS: '1',
      LOG_LEVEL: 'warn',
    });
    child = server.child;
    await server.healthy(baseUrl, 90_000);
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await proxy?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function dialWhileFrozen(): Promise<{ status: number; body: string; elapsedMs: number }> {
    const params = {
      AccountSid: `AC${'0'.repeat(32)}`,
      CallSid: newSid('CA'),
      CallStatus: 'ringing',
      From: '+15557654321',
      To: ECHO_NUMBER,
      Direction: 'inbound',
      ApiVersion: '2010-04-01',
    };
    const url = `${baseUrl}/twilio/voice`;
    const started = Date.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(AUTH_TOKEN, url, params) },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.status, body: await response.text(), elapsedMs: Date.now() - started };
  }

  const POLITE_REFUSAL = /<Say[^>]*>Sorry, we cannot take your call right now[^<]*<\/Say>\s*<Hangup\/>/;

  it("declines an inbound call politely (200, TwiML) well inside Twilio's 15 s when its queries get no answer", async () => {
    // An open pooled connection, then nothing comes back on it.
    expect((await fetch(`${baseUrl}/health/ready`)).status).toBe(200);
    proxy.freeze();
    const answer = await dialWhileFrozen();
    expect(answer).toEqual({ status: 200, body: expect.stringMatching(POLITE_REFUSAL), elapsedMs: expect.any(Number) });
    expect(answer.elapsedMs).toBeLessThan(12_000);
  }, 30_000);

  it('declines it the same way when no connection can be opened (the pool times out)', async () => {
    proxy.thaw();
    expect((await fetch(`${baseUrl}/health/ready`)).status).toBe(200);
    // Every open connection is cut, and new ones are never answered.
    proxy.freeze();
    proxy.dropConnections();
    const answer = await dialWhileFrozen();
    expect(answer).toEqual({ status: 200, body: expect.stringMatching(POLITE_REFUSAL), elapsedMs: expect.any(Number) });
    expect(answer.elapsedMs).toBeLessThan(12_000);
  }, 30_000);

  it('exits within SHUTDOWN_TIMEOUT_MS of SIGTERM when a live call must be ended and the database answers nothing', async () => {
    proxy.thaw();
    const call = new SimulatedTwilioCall({ serverUrl: baseUrl, authToken: AUTH_TOKEN, from: '+15557654321', to: ECHO_NUMBER });
    expect((await call.dial()).rejected).toBe(false);
    await call.connectMedia();
    await call.streamAudio(new Uint8Array(8000).fill(0xff));
    // Ending the call now means storing its end: the database takes the query and never answers.
    proxy.freeze();
    const started = Date.now();
    const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`exited (${code ?? signal})`)));
    child.kill('SIGTERM');
    const outcome = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), SHUTDOWN_TIMEOUT_MS + 5000))]);
    expect({ outcome, output: outcome === 'still running' ? server.output.slice(-2000) : '' }).toEqual({ outcome: expect.stringMatching(/^exited/), output: '' });
    expect(Date.now() - started).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 5000);
  }, 30_000);
});
