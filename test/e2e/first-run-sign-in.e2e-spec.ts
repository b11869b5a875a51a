/**
 * First run as a newcomer meets it: `npm start` with no ADMIN_API_KEY (the server as its own
 * process, two workers, embedded database) ends its start with one line giving a one-time console link. The link
 * yields the organization's admin key once; a second use, or a forged token, is refused; after a
 * restart with the key in place no link is printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '@switchboard/testing';
import { BuiltServer } from '../support/built-server';

jest.setTimeout(240_000);

const LINK_LINE = /first run: open (http:\/\/localhost:\d+\/#\/first-run\/([A-Za-z0-9_-]+)) to sign in/g;

describe('first run without ADMIN_API_KEY: a one-time console sign-in link (e2e, the server as its own process)', () => {
  let dataDir: string;
  let port: number;
  let baseUrl: string;
  let server: BuiltServer | undefined;

  const start = async (workers: string) => {
    server = BuiltServer.spawn({ PORT: String(port), PUBLIC_BASE_URL: '', DATABASE_URL: '', DATA_DIR: dataDir, ADMIN_API_KEY: '', TWILIO_AUTH_TOKEN: '', WORKERS: workers, LOG_FORMAT: 'json' });
    await server.healthy(baseUrl, 150_000);
    return server;
  };
  const stop = async () => {
    const child = server?.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const claim = (token: string) => fetch(`${baseUrl}/console/first-run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });

  beforeAll(async () => {
    port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-first-run-'));
  });

  afterAll(async () => {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints one link, which gives the admin key once; then a restart prints none', async () => {
    const first = await start('2');
    // Both workers are up (healthy answers from either); the link is printed by the first only,
    // once the primary has said that every worker listens: the last line of the start.
    await first.waitForOutput('2 workers listening', 60_000);
    await first.waitForOutput(LINK_LINE, 30_000);
    const links = [...first.output.matchAll(LINK_LINE)];
    expect(links).toHaveLength(1);
    expect(first.output.trimEnd().split('\n').at(-1)).toMatch(LINK_LINE);
    const [, link, token] = links[0] as RegExpMatchArray;
    expect(link).toBe(`http://localhost:${port}/#/first-run/${token}`);
    expect(first.output).toMatch(/TWILIO_AUTH_TOKEN is not set: Twilio routes are off/);

    expect((await fetch(`${baseUrl}/v1/api-keys/current`)).status).toBe(401);
    const forged = await claim('x'.repeat(43));
    expect(forged.status).toBe(410);
    expect(await forged.json()).toMatchObject({ code: 'sign_in_link_spent' });

    const claimed = await claim(token as string);
    expect(claimed.status).toBe(200);
    const { apiKey } = (await claimed.json()) as { apiKey: string };
    expect(apiKey).toMatch(/^sk_live_/);
    // The key is stored hashed only: never printed.
    expect(first.output).not.toContain(apiKey);
    const current = await fetch(`${baseUrl}/v1/api-keys/current`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(current.status).toBe(200);
    expect(await current.json()).toMatchObject({ name: 'first-run-admin', scopes: ['admin'] });

    const again = await claim(token as string);
    expect(again.status).toBe(410);

    await stop();
    const second = await start('1');
    await second.waitForOutput(/console: http:\/\/localhost:\d+\/ \(sign in with an admin or read API key\)/, 30_000);
    expect(second.output).not.toMatch(LINK_LINE);
    expect((await fetch(`${baseUrl}/v1/api-keys/current`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  });
});
