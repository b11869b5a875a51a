/**
 * Keys sent in the wrong place, and signed recording links, never reach the log (issue 26, item 2).
 * The server logs at `info` into a stream the test reads whole; each request carries a secret of
 * its own, and the whole text is searched for every one. The request lines themselves must be
 * there, so switching the request log off could not pass this test.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { WebSocket } from 'ws';
import { bindAgent, dialAgent, speechFixture } from '../support/conversation-agents';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

jest.setTimeout(60_000);

interface LogLine {
  msg?: string;
  req?: { id?: string; url?: string; headers?: Record<string, unknown>; query?: Record<string, unknown> };
  [field: string]: unknown;
}

/** Everything the server logs, as text and as parsed lines, with a bounded wait for a line. */
class CapturedLog {
  text = '';
  readonly lines: LogLine[] = [];
  private pending = '';
  private readonly waiters = new Set<() => void>();
  readonly stream = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      const text = chunk.toString('utf8');
      this.text += text;
      this.pending += text;
      const complete = this.pending.split('\n');
      this.pending = complete.pop() ?? '';
      for (const line of complete) if (line.trim()) this.lines.push(JSON.parse(line) as LogLine);
      for (const wake of this.waiters) wake();
      done();
    },
  });

  /** The first line `accept` takes, waiting for it as lines arrive (at most `timeoutMs`). */
  async line(accept: (line: LogLine) => boolean, description: string, timeoutMs = 10_000): Promise<LogLine> {
    const found = () => this.lines.find(accept);
    const now = found();
    if (now) return now;
    return await new Promise<LogLine>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no log line ${description} within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        const line = found();
        if (!line) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(line);
      };
      this.waiters.add(check);
    });
  }

  /** pino-http's line for the request the response names (written once the response finished). */
  requestLine(response: Response): Promise<LogLine> {
    const id = response.headers.get('x-request-id');
    return this.line((line) => line.msg === 'request completed' && line.req?.id === id, `for request ${id}`);
  }
}

const secret = (label: string) => `${label}_${randomBytes(12).toString('hex')}`;

describe('log redaction (e2e)', () => {
  let server: TestServer;
  const log = new CapturedLog();

  beforeAll(async () => {
    server = await startTestServer({ LOG_LEVEL: 'info' }, { logDestination: log.stream });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
  });

  it('keys in a query or a header, and a signed recording link, appear nowhere in the log; the requests do', async () => {
    const secrets: string[] = [];
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.serverUrl}${path}`, { headers });
      await response.arrayBuffer();
      return { response, line: await log.requestLine(response) };
    };

    // A key in the query, under each listed name and in another case: refused, and logged without it.
    const apiKey = secret('sk_query_api_key');
    const [token, key, sig, signature] = [secret('token'), secret('key'), secret('sig'), secret('signature')];
    secrets.push(apiKey, token, key, sig, signature);
    const byQuery = await get(`/v1/agents?api_key=${apiKey}`);
    expect(byQuery.response.status).toBe(401);
    expect(byQuery.line.req?.url).toBe('/v1/agents?api_key=[redacted]');
    const byNames = await get(`/v1/agents?limit=5&Token=${token}&KEY=${key}&sig=${sig}&signature=${signature}`);
    expect(byNames.response.status).toBe(401);
    expect(byNames.line.req?.url).toBe('/v1/agents?limit=5&Token=[redacted]&KEY=[redacted]&sig=[redacted]&signature=[redacted]');
    expect(byNames.line.req?.query?.['limit']).toBe('5');

    // Keys in headers: X-API-Key, an Authorization the server refuses, and the admin key it accepts,
    // with a cookie and a proxy's credentials beside it.
    const headerKey = secret('sk_x_api_key');
    const bearer = secret('sk_bearer');
    const cookie = secret('session');
    const proxy = secret('proxy');
    secrets.push(headerKey, bearer, cookie, proxy, server.adminApiKey);
    const byHeader = await get('/v1/agents', { 'x-api-key': headerKey });
    expect(byHeader.response.status).toBe(401);
    expect(byHeader.line.req?.headers?.['x-api-key']).toBe('[redacted]');
    expect((await get('/v1/agents', { authorization: `Bearer ${bearer}` })).response.status).toBe(401);
    const accepted = await get('/v1/agents', { authorization: `Bearer ${server.adminApiKey}`, cookie: `sid=${cookie}`, 'proxy-authorization': `Basic ${proxy}` });
    expect(accepted.response.status).toBe(200);
    expect(accepted.line.req?.headers).toMatchObject({ authorization: '[redacted]', cookie: '[redacted]', 'proxy-authorization': '[redacted]' });

    // A media socket upgrade with a token in its query: refused, and the refusal logged without it.
    const upgradeToken = secret('upgrade_token');
    secrets.push(upgradeToken);
    const accountSid = `AC${randomBytes(16).toString('hex')}`;
    const socket = new WebSocket(`${server.serverUrl.replace('http', 'ws')}/twilio/media/${accountSid}?token=${upgradeToken}`);
    const upgradeStatus = await new Promise<number | undefined>((resolve) => {
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode));
      socket.once('error', () => resolve(undefined));
    });
    socket.terminate();
    expect(upgradeStatus).toBe(403);
    await log.line((line) => line.msg?.startsWith('media socket refused') === true, 'refusing the media socket');

    // A recorded call, its signed link made through the API and then fetched without a key.
    const { number } = await bindAgent(server, { engine: 'echo', config: { recording: { enabled: true, channels: 'mono' } } });
    const { call, callId } = await dialAgent(server, number);
    await call.streamAudio(speechFixture('goodbye'), { trailingSilenceMs: 100 });
    await call.hangup();
    const made = await eventually(() => server.api(`/v1/calls/${callId}/recording/link`), (response) => response.status === 200, 15_000);
    const link = new URL(made.body.url as string);
    const linkSignature = link.searchParams.get('signature') ?? '';
    expect(linkSignature).toMatch(/^[0-9a-f]{64}$/);
    secrets.push(linkSignature, link.search.slice(1));
    const fetched = await get(`${link.pathname}${link.search}`);
    expect(fetched.response.status).toBe(200);
    expect(fetched.line.req?.url).toBe(`/recordings/${callId}.wav`);

    // The whole log: every request above has its line, and no secret is anywhere in it.
    for (const value of secrets) expect({ secret: value, found: log.text.includes(value) }).toEqual({ secret: value, found: false });
  });
});
