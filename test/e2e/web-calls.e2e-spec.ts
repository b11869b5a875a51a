/**
 * Calls from the browser without a browser: a Node client speaks the web-call protocol over a real
 * socket (the same messages the console sends), streaming a WAV at 16 kHz in real time. The call is
 * a call like any other: admission, records (direction "web"), transcript, waterfall, cost without
 * telephony lines, barge-in with cleared marks. A fuzz test throws malformed messages at the socket.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWav, sineTone } from '@switchboard/audio';
import { FakeOpenAiServer } from '@switchboard/testing';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebCallClient } from '../support/web-call-client';

jest.setTimeout(60_000);

function fixture16k(name: 'hours' | 'interrupt'): Int16Array {
  const wav = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', `${name}.16k.wav`))));
  if (wav.sampleRate !== 16_000 || wav.channelCount !== 1) throw new Error(`${name}.16k.wav is not 16 kHz mono`);
  return wav.samples;
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

describe('web calls (e2e, a Node client on the browser protocol)', () => {
  let server: TestServer;
  let engines: FakeOpenAiServer;
  let wsUrl: string;

  beforeAll(async () => {
    const tone = sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: 4000, amplitudeDbfs: -12 });
    engines = await FakeOpenAiServer.start({
      transcription: () => ({ text: 'What time do you open tomorrow?' }),
      chat: () => ({ text: ['We open at nine', ' in the morning.'], usage: { promptTokens: 40, completionTokens: 9 } }),
      speech: () => ({ pcm: tone, chunkBytes: [4801, 1234, 161] }),
    });
    server = await startTestServer();
    wsUrl = `${server.serverUrl.replace(/^http/, 'ws')}/v1/web-calls`;
  });

  afterAll(async () => {
    await server?.close();
    await engines?.close();
  });

  const createAgent = async (engine: 'echo' | 'pipeline', config: object = {}) => {
    const created = await server.api('/v1/agents', { method: 'POST', body: { name: `web ${engine}`, engine, config } });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const pipelineConfig = () => {
    const remote = { provider: 'openai', baseUrl: engines.baseUrl };
    return { firstMessage: null, stt: { ...remote, model: 'whisper-1' }, llm: { ...remote, model: 'gpt-test' }, tts: { ...remote, model: 'tts-test', voice: 'alloy' } };
  };
  const mint = async (agentId: string, apiKey?: string) => server.api(`/v1/agents/${agentId}/web-calls`, { method: 'POST', body: { variables: { plan: 'gold' } }, ...(apiKey ? { apiKey } : {}) });

  it('echo agent: the caller hears its own audio back, and the call is recorded as a web call without telephony costs', async () => {
    const agentId = await createAgent('echo');
    const minted = await mint(agentId);
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ audio: { encoding: 'pcm_s16le', sampleRate: 16_000, channels: 1, frameMs: 20 }, url: 'wss://switchboard.test/v1/web-calls' });
    const { callId, token } = minted.body as { callId: string; token: string };

    const client = new WebCallClient(wsUrl);
    await client.opened;
    client.start(callId, token);
    const speech = fixture16k('hours');
    await client.stream(speech, 600);
    await client.waitFor((message) => message.type === 'started', 5_000);
    client.sendJson({ type: 'hangup' });
    expect(await client.closed).toBe(1000);

    // Every frame back is a whole 20 ms frame, and the echo carries the speech's energy.
    expect(client.frames.length).toBeGreaterThan(100);
    expect(client.frames.every((frame) => frame.length === 640)).toBe(true);
    expect(rms(client.received())).toBeGreaterThan(rms(speech) * 0.3);

    // The detail reads the call and its cost in two queries: wait until both show the end.
    const detail = await eventually(() => server.api(`/v1/calls/${callId}`), (response) => response.body.cost?.status === 'priced' && response.body.endReason !== null, 10_000);
    expect(detail.body).toMatchObject({ direction: 'web', status: 'completed', endReason: 'stream_stopped', twilioAccountSid: null, twilioCallSid: null, fromNumber: 'browser', variables: { plan: 'gold' } });
    const types = detail.body.events.map((event: { type: string }) => event.type);
    expect(types).toEqual(expect.arrayContaining(['stream_started', 'stream_stopped', 'stream_closed']));
    const closed = detail.body.events.find((event: { type: string }) => event.type === 'stream_closed');
    expect(closed.payload).toMatchObject({ reason: 'stream_stopped', protocolErrors: 0 });
    expect(closed.payload.audioBytesIn).toBe((speech.length + 600 * 16) * 2);
    const components = detail.body.cost.lines.map((line: { component: string }) => line.component);
    expect(components).not.toContain('telephony');
    expect(components).not.toContain('media_streams');
    expect((await server.api('/v1/calls?direction=web')).body.data.map((call: { id: string }) => call.id)).toContain(callId);
  });

  it('pipeline agent: transcript, reply audio, a latency waterfall with its first mark, and barge-in clears the reply', async () => {
    const agentId = await createAgent('pipeline', pipelineConfig());
    const { callId, token } = (await mint(agentId)).body as { callId: string; token: string };
    const client = new WebCallClient(wsUrl);
    await client.opened;
    client.start(callId, token);
    await client.stream(fixture16k('hours'), 300);
    await client.waitFor((message) => message.type === 'mark', 10_000);
    // The reply is 4 s long and paced to real time, and its first mark says it is playing: speak over
    // it now, so a slow machine's late speech detection still lands inside the reply.
    await client.stream(fixture16k('interrupt'), 200);
    // The server cleared the reply: it has marked the turn interrupted, so the caller may hang up.
    await client.waitFor((message) => message.type === 'clear', 5_000);
    client.sendJson({ type: 'hangup' });
    await client.closed;

    const detail = await eventually(
      () => server.api(`/v1/calls/${callId}`),
      (response) => response.body.cost?.status === 'priced' && response.body.transcript?.some((turn: { interrupted: boolean }) => turn.interrupted),
      15_000,
    );
    const turns = detail.body.transcript as Array<{ role: string; text: string; interrupted: boolean; heardText: string | null }>;
    expect(turns[0]).toMatchObject({ role: 'user', text: 'What time do you open tomorrow?' });
    expect(turns.find((turn) => turn.role === 'assistant')).toMatchObject({ text: 'We open at nine in the morning.', interrupted: true });
    const [waterfall] = detail.body.latency;
    expect(waterfall.asrFinalMs).not.toBeNull();
    expect(waterfall.firstFrameSentMs).not.toBeNull();
    expect(waterfall.firstMarkEchoedMs).not.toBeNull();
    expect(waterfall.interruptedAtMs).not.toBeNull();
    const closed = detail.body.events.find((event: { type: string }) => event.type === 'stream_closed');
    expect(closed.payload.clearsSent).toBeGreaterThanOrEqual(1);
    expect(closed.payload.marksCleared).toBeGreaterThanOrEqual(1);
    expect(closed.payload.heardMs).toBeGreaterThan(0);
    const components = detail.body.cost.lines.map((line: { component: string }) => line.component);
    expect(components).toEqual(expect.arrayContaining(['stt', 'llm_input', 'tts_characters']));
    expect(components).not.toContain('telephony');
  });

  it('a read key may not start a web call; an unknown agent is 404; a used token is refused', async () => {
    const agentId = await createAgent('echo');
    const readKey = await server.api('/v1/api-keys', { method: 'POST', body: { name: 'reader', scopes: ['read'] } });
    expect((await mint(agentId, readKey.body.key as string)).status).toBe(403);
    expect((await mint('00000000-0000-4000-8000-000000000000')).status).toBe(404);

    const { callId, token } = (await mint(agentId)).body as { callId: string; token: string };
    const first = new WebCallClient(wsUrl);
    await first.opened;
    first.start(callId, token);
    await first.waitFor((message) => message.type === 'started', 5_000);
    const second = new WebCallClient(wsUrl);
    await second.opened;
    second.start(callId, token);
    expect(await second.closed).toBe(1008);
    expect(second.texts).toContainEqual(expect.objectContaining({ type: 'error', code: 'invalid_token' }));
    first.sendJson({ type: 'hangup' });
    await first.closed;
  });

  it('fuzz: malformed messages get clear errors and close codes, and the server keeps serving calls', async () => {
    const agentId = await createAgent('echo');
    const open = async () => {
      const client = new WebCallClient(wsUrl, { playInRealTime: false });
      await client.opened;
      return client;
    };

    // A bad token: 1008.
    const badToken = await open();
    badToken.start('00000000-0000-4000-8000-000000000000', 'x'.repeat(43));
    expect(await badToken.closed).toBe(1008);

    // Audio that is not PCM16 (odd length): 1003, with the reason.
    const odd = await open();
    odd.socket.send(Buffer.alloc(641));
    expect(await odd.closed).toBe(1003);
    expect(odd.texts).toContainEqual(expect.objectContaining({ type: 'error', code: 'odd_audio_length' }));

    // A message over the size bound: ws closes with 1009.
    const big = await open();
    big.socket.send(Buffer.alloc(70_000));
    expect(await big.closed).toBe(1009);

    // Garbage on a live call: each gets an error; past the bound the socket closes with 1002; the call is recorded with why.
    const { callId, token } = (await mint(agentId)).body as { callId: string; token: string };
    const noisy = await open();
    noisy.start(callId, token);
    await noisy.waitFor((message) => message.type === 'started', 5_000);
    const garbage = ['not json', '{}', '{"type":"nope"}', '{"type":"mark"}', '{"type":"mark","name":"never-sent"}', '{"type":"dtmf","digit":"x"}', '{"type":"start","callId":"a","token":"bbbbbbbbbbbbbbbbbbbbbbbb"}', 'x'.repeat(2000), '[1,2,3]', '"str"', 'null'];
    for (let i = 0; noisy.closeCode === undefined && i < 40; i++) {
      noisy.socket.send(garbage[i % garbage.length] as string);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await noisy.closed).toBe(1002);
    const codes = new Set(noisy.texts.filter((message) => message.type === 'error').map((message) => message.code));
    expect([...codes].sort()).toEqual(['invalid_json', 'invalid_message', 'unexpected_start', 'unknown_mark']);
    const detail = await eventually(() => server.api(`/v1/calls/${callId}`), (response) => response.body.endReason !== null, 10_000);
    expect(detail.body).toMatchObject({ endReason: 'protocol_error', status: 'completed' });
    expect(detail.body.events.filter((event: { type: string }) => event.type === 'protocol_error').length).toBe(20);

    // Random bytes and random text, then a normal call still works.
    for (let round = 0; round < 20; round++) {
      const client = await open();
      const length = 1 + Math.floor(Math.random() * 2000);
      const bytes = Buffer.from(Array.from({ length }, () => Math.floor(Math.random() * 256)));
      client.socket.send(round % 2 === 0 ? bytes : bytes.toString('latin1'));
      client.close();
      await client.closed;
    }
    const again = (await mint(agentId)).body as { callId: string; token: string };
    const healthy = await open();
    healthy.start(again.callId, again.token);
    await healthy.waitFor((message) => message.type === 'started', 5_000);
    healthy.sendJson({ type: 'hangup' });
    expect(await healthy.closed).toBe(1000);
    expect((await fetch(`${server.serverUrl}/health`)).status).toBe(200);
  });
});
