import { createServer } from 'node:net';
import { LoopbackMediaServer } from '@switchboard/testing';
import { SimulatedTwilioCall } from './simulated-call';
import type { SimulatedTwilioCallOptions } from './simulated-call.options';

// Robustness hooks of the simulated caller, against a loopback server over real sockets.
const AUTH_TOKEN = 'test-auth-token-0123456789abcdef';
const PUBLIC_BASE_URL = 'https://public.example.test';

describe('SimulatedTwilioCall', () => {
  let server: LoopbackMediaServer;
  const options = (): SimulatedTwilioCallOptions => ({
    serverUrl: server.url,
    publicBaseUrl: PUBLIC_BASE_URL,
    authToken: AUTH_TOKEN,
    from: '+15550001111',
    to: '+15550002222',
    idleSilence: false,
  });

  beforeEach(async () => {
    server = new LoopbackMediaServer({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL });
    await server.start();
  });

  afterEach(async () => {
    await server.stop();
  });

  it('a tampered or missing webhook signature gets the server\'s 403 as WEBHOOK_HTTP_ERROR', async () => {
    for (const signature of ['tampered', 'omit'] as const) {
      const call = new SimulatedTwilioCall(options());
      await expect(call.dial({ signature })).rejects.toMatchObject({
        code: 'WEBHOOK_HTTP_ERROR',
        httpStatus: 403,
        retryable: false,
      });
    }
    expect(server.voiceRequests.map((request) => [request.signature === undefined, request.signatureValid])).toEqual([
      [false, false],
      [true, false],
    ]);
  });

  it('signs over PUBLIC_BASE_URL: a caller that signs the local address is refused', async () => {
    const call = new SimulatedTwilioCall({ ...options(), publicBaseUrl: server.url });
    await expect(call.dial()).rejects.toMatchObject({ httpStatus: 403 });
  });

  it('a media upgrade without a signature is refused as MEDIA_UPGRADE_REJECTED', async () => {
    const call = new SimulatedTwilioCall(options());
    await call.dial();
    await expect(call.connectMedia({ signature: 'omit' })).rejects.toMatchObject({
      code: 'MEDIA_UPGRADE_REJECTED',
      httpStatus: 403,
    });
    expect(server.upgradeSignatures).toEqual([{ signature: undefined, valid: false }]);
  });

  it('replaying another call\'s stream token gets the second socket closed', async () => {
    const first = new SimulatedTwilioCall(options());
    const twiml = await first.dial();
    await first.connectMedia();
    const replay = new SimulatedTwilioCall(options());
    await replay.connectMedia({ stream: twiml.stream ?? undefined });
    await expect(replay.closed).resolves.toEqual({ code: 1008, reason: 'invalid stream token', closedBy: 'server' });
    expect(first.isMediaOpen).toBe(true);
    expect(server.tokenRejections).toEqual([twiml.stream?.parameters['token']]);
    await first.hangup();
  });

  it('sends raw frames as is, and drops the connection without stop (peer loss)', async () => {
    const call = new SimulatedTwilioCall(options());
    await call.dial();
    await call.connectMedia();
    call.sendRaw('{"event":"media","streamSid":');
    call.sendRaw(JSON.stringify({ event: 'media', streamSid: 'MZ' + '0'.repeat(32), media: { payload: '' } }));
    const session = server.sessions[0];
    await waitUntil(() => (session?.rawFrames.length ?? 0) >= 4);
    const info = await call.dropConnection();
    expect(info.closedBy).toBe('caller');
    await expect(session?.closed).resolves.toBe(1006);
    expect(session?.rawFrames.slice(2)).toEqual([
      '{"event":"media","streamSid":',
      JSON.stringify({ event: 'media', streamSid: 'MZ' + '0'.repeat(32), media: { payload: '' } }),
    ]);
    expect(session?.messages.some((message) => message['event'] === 'stop')).toBe(false);
    expect(() => call.sendRaw('late')).toThrow(expect.objectContaining({ code: 'SOCKET_NOT_OPEN' }));
  });

  it('records server messages Twilio would not accept as protocol errors, and keeps the call up', async () => {
    const call = new SimulatedTwilioCall(options());
    await call.dial();
    await call.connectMedia();
    const session = server.sessions[0];
    await waitUntil(() => session?.streamSid !== undefined);
    session?.send({ event: 'media', streamSid: 'MZ' + 'f'.repeat(32), media: { payload: 'AAAA' } });
    session?.send({ event: 'mark', streamSid: session.streamSid });
    session?.send({ event: 'clear', streamSid: session.streamSid });
    await call.waitForMessage((message) => message.event === 'clear');
    expect(call.protocolErrors).toEqual([expect.stringMatching(/streamSid/), expect.stringMatching(/mark\.name/)]);
    expect(call.isMediaOpen).toBe(true);
    const info = await call.hangup();
    expect(info).toEqual({ code: 1000, reason: 'call ended', closedBy: 'caller' });
    await expect(session?.closed).resolves.toBe(1000);
    expect(call.result().latency).toMatchObject({ clears: 1, protocolErrors: 2 });
  });

  it('echoes a mark at once when nothing is queued and sends DTMF on demand', async () => {
    const call = new SimulatedTwilioCall(options());
    await call.dial();
    await call.connectMedia();
    const session = server.sessions[0];
    await waitUntil(() => session?.streamSid !== undefined);
    const echoed = new Promise((resolve) => call.once('markEchoed', resolve));
    session?.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'idle-mark' } });
    await expect(echoed).resolves.toEqual({ name: 'idle-mark', reason: 'played' });
    call.sendDtmf('#');
    expect(() => call.sendDtmf('x')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    await waitUntil(() => session?.messages.some((message) => message['event'] === 'dtmf') ?? false);
    await call.hangup();
    expect(session?.messages.map((message) => message['event'])).toEqual(['connected', 'start', 'mark', 'dtmf', 'stop']);
    expect(() => call.sendDtmf('1')).toThrow(expect.objectContaining({ code: 'SOCKET_NOT_OPEN' }));
  });

  it('with awaitEchoMs, sends stop only once every frame sent has come back', async () => {
    // A late echo: the server holds the caller's frames and plays them back only after the hang-up began.
    await server.stop();
    const held: unknown[] = [];
    server = new LoopbackMediaServer({
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      echo: false,
      onMessage: (_session, message) => {
        if (message['event'] === 'media') held.push(message['media'].payload);
      },
    });
    await server.start();
    const call = new SimulatedTwilioCall(options());
    await call.dial();
    await call.connectMedia();
    await call.streamAudio(new Uint8Array(480).fill(0x42), { trailingSilenceMs: 0 });
    await waitUntil(() => held.length === 3);
    const hangingUp = call.hangup({ awaitEchoMs: 10_000 });
    const session = server.sessions[0];
    // Without the wait, stop would already be on its way and these echoes would not count.
    for (const payload of held) session?.send({ event: 'media', streamSid: session.streamSid, media: { payload } });
    await expect(hangingUp).resolves.toMatchObject({ code: 1000, closedBy: 'caller' });
    expect(call.result().latency).toMatchObject({ framesSent: 3, framesReceived: 3 });
    expect(session?.messages.map((message) => message['event'])).toEqual(['connected', 'start', 'media', 'media', 'media', 'stop']);
  });

  it('with awaitEchoMs, hangs up anyway when the echo never comes (the wait is bounded)', async () => {
    await server.stop();
    server = new LoopbackMediaServer({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL, echo: false });
    await server.start();
    const call = new SimulatedTwilioCall(options());
    await call.dial();
    await call.connectMedia();
    await call.streamAudio(new Uint8Array(160).fill(0x42), { trailingSilenceMs: 0 });
    await expect(call.hangup({ awaitEchoMs: 50 })).resolves.toMatchObject({ code: 1000, closedBy: 'caller' });
    expect(call.result().latency).toMatchObject({ framesSent: 1, framesReceived: 0 });
    expect(server.sessions[0]?.messages.at(-1)?.['event']).toBe('stop');
  });

  it('reports an unreachable server as retryable SERVER_UNREACHABLE', async () => {
    const port = await closedPort();
    const call = new SimulatedTwilioCall({ ...options(), serverUrl: `http://127.0.0.1:${port}` });
    await expect(call.dial()).rejects.toMatchObject({ code: 'SERVER_UNREACHABLE', retryable: true });
    await expect(call.connectMedia()).rejects.toMatchObject({ code: 'CALL_NOT_CONNECTED' });
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A port nothing listens on: bind an ephemeral one, then release it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
