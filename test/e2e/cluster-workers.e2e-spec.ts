import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { freeLoopbackPort } from '@switchboard/testing';
import { BuiltServer } from '../support/built-server';
import { isProcessAlive } from '../support/processes';

/**
 * The server as `npm start` runs it on a multi-core machine (WORKERS=2): a primary that serves the
 * embedded database, and two workers that each take whole calls. Callers dial over real sockets;
 * every call must be answered by whichever worker node:cluster hands the socket to, a worker that
 * dies must be replaced, and SIGTERM must stop them all within the shutdown bound.
 */
const AUTH_TOKEN = 'cluster-test-auth-token-0123456789';
const OPERATOR_KEY = 'cluster-test-operator-key-0123456789abcdef';
const ECHO_NUMBER = '+15550002424';
const SHUTDOWN_TIMEOUT_MS = 5000;
const CALL_AUDIO_BYTES = 8000; // 1 s of mu-law

describe('WORKERS=2 (e2e, the server in its own processes, embedded database)', () => {
  let child: ChildProcess;
  let baseUrl: string;
  let dataDir: string;
  let server: BuiltServer;
  const tail = () => server.output.slice(-3000);

  /** pid of the worker that carried each call, from its own "media stream started" log line. */
  function carriers(): Map<string, number> {
    const found = new Map<string, number>();
    for (const line of server.output.split('\n')) {
      if (!line.includes('"media stream started"')) continue;
      const entry = JSON.parse(line) as { pid: number; callId: string };
      found.set(entry.callId, entry.pid);
    }
    return found;
  }

  async function placeEchoCall(): Promise<{ callId: string; sent: number; received: number; errors: string[] }> {
    const call = new SimulatedTwilioCall({ serverUrl: baseUrl, authToken: AUTH_TOKEN, from: '+15557654321', to: ECHO_NUMBER, idleSilence: false });
    const callId = (await call.dial()).stream!.parameters['callId']!;
    await call.connectMedia();
    await call.streamAudio(new Uint8Array(CALL_AUDIO_BYTES).fill(0x7f), { trailingSilenceMs: 400 });
    await call.hangup();
    const result = call.result();
    return { callId, sent: result.latency.bytesSent, received: result.latency.bytesReceived, errors: result.protocolErrors };
  }

  beforeAll(async () => {
    const port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-cluster-'));
    server = BuiltServer.spawn({
      WORKERS: '2',
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      OPERATOR_API_KEY: OPERATOR_KEY,
      ECHO_AGENT_NUMBER: ECHO_NUMBER,
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      LOG_LEVEL: 'info',
    });
    child = server.child;
    await server.waitForOutput('2 workers listening', 150_000);
  }, 180_000);

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    for (const pid of new Set(carriers().values())) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers every call from both workers, each stream authorised through the shared database', async () => {
    const calls = await Promise.all(Array.from({ length: 8 }, () => placeEchoCall()));
    for (const call of calls) {
      expect(call.errors).toEqual([]);
      expect(call.received).toBeLessThanOrEqual(call.sent);
      // Every frame of the caller's audio came back; only echoes of the trailing silence may cross the hang-up.
      expect(call.received).toBeGreaterThanOrEqual(CALL_AUDIO_BYTES);
    }
    const byCall = carriers();
    const pids = new Set(calls.map((call) => byCall.get(call.callId)));
    expect(pids.has(undefined)).toBe(false);
    expect(pids.has(child.pid)).toBe(false);
    expect(pids.size).toBe(2);
  }, 60_000);

  it("reports every worker's event-loop delay in one scrape, whichever worker takes it", async () => {
    for (let scrape = 0; scrape < 3; scrape++) {
      const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
      expect(response.status).toBe(200);
      const series = (await response.text()).match(/^nodejs_eventloop_lag_p99_seconds\{worker="\d+"\} /gm) ?? [];
      expect(series).toHaveLength(2);
    }
  }, 30_000);

  it('replaces a worker that dies, and the replacement takes calls', async () => {
    const victim = [...new Set(carriers().values())][0]!;
    process.kill(victim, 'SIGKILL');
    await server.waitForOutput(/worker \d+ \(pid \d+\) replaced it/, 90_000);
    const before = new Set(carriers().values());
    const calls = await Promise.all(Array.from({ length: 6 }, () => placeEchoCall()));
    for (const call of calls) expect(call.received).toBeGreaterThanOrEqual(CALL_AUDIO_BYTES);
    const after = new Set(calls.map((call) => carriers().get(call.callId)));
    expect(after.has(victim)).toBe(false);
    expect([...after].some((pid) => pid !== undefined && !before.has(pid))).toBe(true);
  }, 120_000);

  it('stops the primary and every worker within the shutdown bound on SIGTERM', async () => {
    const workers = [...new Set(carriers().values())].filter(isProcessAlive);
    expect(workers.length).toBe(2);
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), SHUTDOWN_TIMEOUT_MS + 15_000))]);
    expect({ code, tail: code === 0 ? '' : tail() }).toEqual({ code: 0, tail: '' });
    expect(Date.now() - started).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 15_000);
    expect(workers.filter(isProcessAlive)).toEqual([]);
  }, 40_000);
});
