/**
 * `npm start` as a person meets it in a terminal (issue 27, "the first ten minutes"): the built
 * server on a pseudo-terminal, its default WORKERS>1 cluster, the embedded database in a DATA_DIR
 * of its own. The first start ends on the one-time sign-in link; after signing in, the next start
 * is up quickly, says little, and its last line is where the console is.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freeLoopbackPort } from '@switchboard/testing';
import { BuiltServer } from '../support/built-server';

jest.setTimeout(300_000);

const ANSI = /\u001b\[[0-9;]*m/g;
const LINK_LINE = /first run: open http:\/\/localhost:\d+\/#\/first-run\/([A-Za-z0-9_-]+) to sign in/;
const PRIMARY_LINE = /2 workers listening on port \d+ \(pid (\d+) is the primary\)/;
/** What issue 27 accepts for a start with nothing to set up: lines a person reads at a glance. */
const MOST_LINES_AT_DEFAULT_LEVEL = 15;
/** Issue 27's acceptance line for a restart: healthy within 15 s of `npm start` (see below). */
const RESTART_HEALTHY_WITHIN_MS = 15_000;

/** What the terminal shows, one entry a line, colours and blank lines dropped. */
const printedLines = (server: BuiltServer) =>
  server.output
    .replace(ANSI, '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');

describe('npm start on a terminal (e2e, the built server as its own processes, embedded database)', () => {
  let dataDir: string;
  let port: number;
  let baseUrl: string;
  let server: BuiltServer | undefined;

  const start = () =>
    BuiltServer.spawnOnTerminal({
      PORT: String(port),
      PUBLIC_BASE_URL: '',
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      MODELS_DIR: join(dataDir, 'models'),
      ADMIN_API_KEY: '',
      TWILIO_AUTH_TOKEN: '',
      OPENAI_API_KEY: '',
      WORKERS: '2',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'auto',
    });

  /**
   * SIGTERM to the cluster primary itself (its pid is in its own line): it stops its workers and
   * the embedded database, then `script` ends with it. Signalling `script` instead would have it
   * SIGKILL the server after two seconds.
   */
  const stop = async (running: BuiltServer) => {
    if (running.child.exitCode !== null) return;
    const exited = new Promise((resolve) => running.child.once('exit', resolve));
    const primaryPid = PRIMARY_LINE.exec(running.output.replace(ANSI, ''))?.[1];
    if (primaryPid === undefined) running.child.kill('SIGKILL');
    else process.kill(Number(primaryPid), 'SIGTERM');
    await exited;
  };

  beforeAll(async () => {
    port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-readable-start-'));
    mkdirSync(join(dataDir, 'models'));
  });

  afterAll(async () => {
    if (server) await stop(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the first start ends on the sign-in link; the next is healthy within 15 s, prints at most 15 lines and ends on the console URL', async () => {
    server = start();
    await server.healthy(baseUrl, 200_000);
    await server.waitForOutput(LINK_LINE, 60_000);
    const firstLines = printedLines(server);
    expect(firstLines.at(-1)).toMatch(LINK_LINE);
    // Nest's route table (some 200 lines a worker) is at debug now.
    expect(server.output).not.toContain('Mapped {');

    // The person signs in with the link, as the console would.
    const token = LINK_LINE.exec(firstLines.at(-1) ?? '')?.[1];
    const claimed = await fetch(`${baseUrl}/console/first-run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(claimed.status).toBe(200);
    await stop(server);

    const spawnedAt = performance.now();
    server = start();
    await server.healthy(baseUrl, 120_000);
    const healthyAfterMs = performance.now() - spawnedAt;
    await server.waitForOutput(`console: http://localhost:${port}/`, 60_000);
    const lines = printedLines(server);
    // Whatever is past the allowance, shown if any.
    expect(lines.slice(MOST_LINES_AT_DEFAULT_LEVEL)).toEqual([]);
    expect(lines.at(-1)).toContain(`console: http://localhost:${port}/`);
    expect(lines.filter((line) => line.includes('Model features'))).toHaveLength(1);
    // The project keeps timing budgets in benchmarks, and tests wait for events; this bound is the
    // exception because it is issue 27's acceptance line, what a person waits for on a restart.
    // Until /health a restart does about 9 s of CPU on a 2-core machine, spread over two processes
    // (the primary's embedded database, the first worker; nothing to build or migrate), so the
    // bound leaves room for a busy machine. It fails on a regression (a rebuild, a migration run
    // or a whole application loaded again before the first worker), or on a machine so loaded
    // that its timing says nothing about the start.
    expect(healthyAfterMs).toBeLessThan(RESTART_HEALTHY_WITHIN_MS);
  });
});
