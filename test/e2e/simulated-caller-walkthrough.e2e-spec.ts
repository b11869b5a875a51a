/**
 * The "Dial it without Twilio" walkthrough (docs/getting-started.md), exactly as a user types it: the server started
 * with nothing but a Twilio token, the echo agent's number and an admin key (so PUBLIC_BASE_URL is
 * the server's default), then `npm run call` in another process with the same token and nothing
 * else. The caller must sign for the URL the server checks against, or the voice webhook answers
 * 403 invalid_twilio_signature and the walkthrough fails for every new user.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '@switchboard/testing';
import { BuiltServer } from '../support/built-server';
import { runCallCommand } from '../support/call-command';

jest.setTimeout(180_000);

const AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const ECHO_NUMBER = '+15551230000';
const ADMIN_API_KEY = 'sk_local_walkthrough_key_000000';

describe('README walkthrough: the simulated caller against a server on its defaults (e2e, two processes)', () => {
  let server: BuiltServer;
  let dataDir: string;
  let port: number;

  beforeAll(async () => {
    port = await freeLoopbackPort();
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-walkthrough-'));
    // PUBLIC_BASE_URL empty is unset: the server signs against its default, http://localhost:<PORT>.
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: '',
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      ECHO_AGENT_NUMBER: ECHO_NUMBER,
      ADMIN_API_KEY,
      WORKERS: '1',
      LOG_LEVEL: 'warn',
    });
    await server.healthy(`http://127.0.0.1:${port}`, 120_000);
  }, 150_000);

  afterAll(() => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('places the call with only the token set, gets the echo back, and the call is listed by the API', async () => {
    const out = join(dataDir, 'agent.wav');
    const caller = await runCallCommand(['--to', ECHO_NUMBER, '--wav', 'test/fixtures/speech/hours.16k.wav', '--out', out], {
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      PORT: String(port),
    });
    // A status, not three digits inside a random CallSid or StreamSid ("...d9403197...").
    expect(caller.output).not.toMatch(/invalid_twilio_signature|\b403\b/);
    expect(caller.code).toBe(0);
    expect(caller.output).toMatch(new RegExp(`signed for http://localhost:${port}`));
    // The echo agent sent the caller's audio back: the saved reply is more than a WAV header.
    expect(statSync(out).size).toBeGreaterThan(8000);

    const response = await fetch(`http://127.0.0.1:${port}/v1/calls`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } });
    expect(response.status).toBe(200);
    const calls = (await response.json()) as { data: Array<{ toNumber: string; status: string }> };
    expect(calls.data.map((call) => call.toNumber)).toEqual([ECHO_NUMBER]);
    // The caller sent Twilio's status callbacks, as a number set up as the README says gets them:
    // the call reads completed, not "ringing" for ever.
    expect(calls.data[0]!.status).toBe('completed');
  });
});
