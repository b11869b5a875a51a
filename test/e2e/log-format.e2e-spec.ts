/**
 * Logs as a person and as a log collector see them: the server on a terminal prints lines a person
 * can read (pino-pretty); the same server writing into a pipe prints one JSON object a line. Both
 * keep secrets out (the Authorization header is redacted before either format sees it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '@switchboard/testing';
import { BuiltServer } from '../support/built-server';

jest.setTimeout(180_000);

const ADMIN_API_KEY = 'sk_log_format_admin_key_0123456789';
const ANSI = /\u001b\[[0-9;]*m/g;

async function runServerAndRequest(spawn: (env: Record<string, string>) => BuiltServer): Promise<string> {
  const port = await freeLoopbackPort();
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-logs-'));
  const server = spawn({
    PORT: String(port),
    DATA_DIR: dataDir,
    // Its own embedded database: a bootstrap key of its own on the shared test database would revoke the other suites' keys.
    DATABASE_URL: '',
    ADMIN_API_KEY,
    WORKERS: '1',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'auto',
  });
  try {
    await server.healthy(`http://127.0.0.1:${port}`, 120_000);
    const response = await fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } });
    expect(response.status).toBe(200);
    // The request's line is written once the response is finished.
    await server.waitForOutput('request completed', 10_000);
    return server.output.replace(ANSI, '');
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => (server.child.exitCode === null ? server.child.once('exit', resolve) : resolve(undefined)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('LOG_FORMAT=auto (e2e, the server in its own process)', () => {
  it('on a terminal: human-readable lines (time, level, message), no JSON, the key redacted', async () => {
    const output = await runServerAndRequest((env) => BuiltServer.spawnOnTerminal(env));
    const requestLine = output.split(/\r?\n/).find((line) => line.includes('request completed')) ?? '';
    expect(requestLine).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO/);
    expect(output).toContain('/v1/agents');
    expect(output.split(/\r?\n/).filter((line) => line.trimStart().startsWith('{"level"'))).toEqual([]);
    expect(output).not.toContain(ADMIN_API_KEY);
    // With ADMIN_API_KEY set there is no sign-in link, and the start still says where the console is.
    expect(output).toMatch(/INFO: console: http\S+\/ \(sign in with an admin or read API key\)/);
    expect(output).not.toMatch(/Mapped \{|context: /);
  });

  it('into a pipe: one JSON object a line, the key redacted', async () => {
    const output = await runServerAndRequest((env) => BuiltServer.spawn(env));
    const lines = output.split('\n').filter((line) => line.trim().length > 0);
    const parsed = lines.map((line) => JSON.parse(line) as { msg?: string; req?: { url?: string; headers?: Record<string, string> } });
    const request = parsed.find((line) => line.req?.url === '/v1/agents');
    expect(request?.msg).toBe('request completed');
    expect(request?.req?.headers?.['authorization']).toBe('[redacted]');
    expect(output).not.toContain(ADMIN_API_KEY);
  });
});
