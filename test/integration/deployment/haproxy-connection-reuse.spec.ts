import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Agent, request } from 'undici';
import { freeLoopbackPort } from '@switchboard/testing';
import { HaproxyProcess } from '../../support/haproxy';

/**
 * A Node server closes a kept-alive connection once it has been idle for its keep-alive timeout
 * (and every idle one when it shuts down). If HAProxy reuses such a connection for a request at that
 * moment, the request is lost: HAProxy does not retry a POST it has sent, and under its default
 * "safe" reuse it closes the caller's connection instead of answering, so Twilio's status callback
 * (or a voice webhook) fails with "other side closed". The multi-instance test met this once in a
 * thousand calls under CI load. The shipped configuration sends every request on a connection of
 * its own to the instance, which removes the race rather than making it rarer; this test makes it
 * certain: the backend closes any connection that brings it a second request, as the race would.
 */
describe('docker/haproxy/haproxy.cfg and server-side connection reuse', () => {
  let backend: Server;
  let haproxy: HaproxyProcess;
  let requestsOnReusedConnections = 0;
  const requestsBySocket = new WeakMap<Socket, number>();

  beforeAll(async () => {
    backend = createServer((req, res) => {
      const seen = (requestsBySocket.get(req.socket) ?? 0) + 1;
      requestsBySocket.set(req.socket, seen);
      if (seen > 1 && req.url !== '/health/ready') {
        // The instance closed this connection as the request arrived: nothing is answered.
        requestsOnReusedConnections++;
        req.socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => res.end('<Response/>'));
    });
    const port = await freeLoopbackPort();
    await new Promise<void>((resolve) => backend.listen(port, '127.0.0.1', resolve));
    haproxy = await HaproxyProcess.start([port, port, port]);
    await haproxy.waitForStatus('app1', 'UP', 10_000);
  });

  afterAll(async () => {
    await haproxy?.stop();
    backend?.closeAllConnections();
    await new Promise((resolve) => backend?.close(resolve));
  });

  it('answers every POST of a kept-alive caller connection, none sent over a reused instance connection', async () => {
    // One caller connection, kept alive across its requests, as Twilio's webhook client keeps them.
    const caller = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const response = await request(`${haproxy.url}/twilio/status`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `CallStatus=completed&n=${i}`,
          dispatcher: caller,
        });
        await response.body.text();
        statuses.push(response.statusCode);
      }
      expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
      expect(requestsOnReusedConnections).toBe(0);
    } finally {
      await caller.close();
    }
  });
});
