import { once } from 'node:events';
import { request as httpRequest, Agent, type Server } from 'node:http';
import { connect } from 'node:net';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * A load balancer keeps its connections to an instance open between requests (AWS ALB for 60 s).
 * Node closes an idle one after 5 s by default, and a request the balancer sends over it at that
 * moment is lost. HTTP_KEEP_ALIVE_TIMEOUT_S (65 s by default) keeps them open longer than that.
 */
describe('HTTP keep-alive towards a load balancer (e2e)', () => {
  let byDefault: TestServer;
  let configured: TestServer;

  beforeAll(async () => {
    [byDefault, configured] = await Promise.all([startTestServer({}), startTestServer({ HTTP_KEEP_ALIVE_TIMEOUT_S: '7' })]);
  }, 60_000);

  afterAll(async () => Promise.all([byDefault?.close(), configured?.close()]));

  /** GET /health over `agent`, answering the Keep-Alive header and the socket it came on. */
  const get = (server: TestServer, agent: Agent) =>
    new Promise<{ keepAlive: string | undefined; socket: unknown }>((resolve, reject) => {
      const req = httpRequest(`${server.serverUrl}/health`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ keepAlive: res.headers['keep-alive'] as string | undefined, socket: req.socket }));
      });
      req.on('error', reject);
      req.end();
    });

  it('keeps an idle connection open past Node’s 5 s default, and says so in Keep-Alive', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(byDefault, agent);
      expect(first.keepAlive).toBe('timeout=65');
      // A negative check, so a bounded wait: the server must NOT close the idle connection within
      // Node's 5 s default. The wait is a lower bound only; a slower machine waits longer, which
      // still lies well inside the 65 s this server keeps connections for.
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      const second = await get(byDefault, agent);
      // The same connection served the second request: the server had not closed it.
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });

  it('closing does not wait out the keep-alive of a connection still answering when it began', async () => {
    // The longest keep-alive there is (an hour): were answered connections not closed at once on
    // shutdown, this socket would stay open past the test's own timeout, so the close of the socket
    // below is the event that proves it, however long the machine takes to shut the server down.
    const server = await startTestServer({ HTTP_KEEP_ALIVE_TIMEOUT_S: '3600' });
    const httpServer: Server = server.app.getHttpServer();
    const { port } = new URL(server.serverUrl);
    const socket = connect(Number(port), '127.0.0.1');
    const answered = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    // A webhook whose body is still arriving: in flight when the server starts closing.
    const body = 'CallSid=CA00000000000000000000000000000000&From=%2B15550001111';
    const requestArrived = once(httpServer, 'request');
    socket.write(`POST /twilio/voice HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await requestArrived;
    const closed = server.close();
    // The rest of the body arrives once shutdown has begun (its hook has shortened the keep-alive).
    await eventually(async () => httpServer.keepAliveTimeout, (timeoutMs) => timeoutMs !== 3_600_000);
    socket.write(body.slice(10));
    expect(await answered).toMatch(/^HTTP\/1\.1 \d{3}/);
    await closed;
  }, 90_000);

  it('HTTP_KEEP_ALIVE_TIMEOUT_S sets the bound', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await get(configured, agent)).keepAlive).toBe('timeout=7');
    } finally {
      agent.destroy();
    }
  });
});
