import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { FakeOpenAiServer, freeLoopbackPort } from '@switchboard/testing';
import { apiRequest, type ApiRequestInit } from '../support/api-request';
import { BuiltServer } from '../support/built-server';
import { speechFixture, toneSpeechFor } from '../support/conversation-agents';
import { eventually } from '../support/eventually';
import { WebCallClient } from '../support/web-call-client';

/**
 * An agent whose model never stops talking, called over both transports of the server as `npm
 * start` runs it. The caller counts the agent's audio as it arrives against the time since it
 * finished speaking: the server may be ahead of the caller's playback by the lead it is configured
 * with (OUTBOUND_AUDIO_LEAD_MS), never more, however fast the model and TTS produce speech. And the
 * reply stops at the agent's maxReplyMs: exactly that much audio, the model's request closed, the
 * call's events saying why.
 */
const ADMIN_KEY = 'paced-speech-admin-key-0123456789abcdef';
const AUTH_TOKEN = 'paced-speech-auth-token-0123456789';
const ACCOUNT_SID = `AC${'7'.repeat(32)}`;
const LEAD_MS = 500;
const MAX_REPLY_MS = 10_000;
/** One sentence every few milliseconds: about a second of speech each, fifty times faster than it plays. */
const SENTENCE = 'This answer goes on and on without end. ';
const SENTENCE_EVERY_MS = 20;

/** A Chat Completions stream that never finishes, and tells when the server closes it. */
class EndlessModel {
  readonly closed: Promise<void>[] = [];
  private constructor(readonly server: Server) {}

  static async start(): Promise<EndlessModel> {
    const model = new EndlessModel(createServer());
    model.server.on('request', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: SENTENCE } }] })}\n\n`), SENTENCE_EVERY_MS);
      model.closed.push(new Promise((resolve) => res.once('close', () => resolve(clearInterval(timer)))));
    });
    await new Promise<void>((resolve) => model.server.listen(0, '127.0.0.1', resolve));
    return model;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The agent's audio as the caller receives it. `tooFar` keeps the worst moment: audio received
 * minus the time since the caller stopped speaking (the reply cannot start earlier), which pacing
 * bounds by the lead.
 */
class ArrivalLedger {
  receivedMs = 0;
  worstAheadMs = Number.NEGATIVE_INFINITY;
  lastAt: number | undefined;
  constructor(readonly speechEndedAt: number) {}

  add(ms: number): void {
    const now = performance.now();
    this.lastAt = now;
    this.receivedMs += ms;
    this.worstAheadMs = Math.max(this.worstAheadMs, this.receivedMs - (now - this.speechEndedAt));
  }
}

describe('Outbound speech paced to real time and bounded by maxReplyMs (e2e, the built server)', () => {
  let baseUrl: string;
  let dataDir: string;
  let server: BuiltServer;
  let model: EndlessModel;
  let engines: FakeOpenAiServer;

  const api = (path: string, init: Omit<ApiRequestInit, 'apiKey'> = {}) => apiRequest(baseUrl, path, { ...init, apiKey: ADMIN_KEY });

  async function createAgent(name: string): Promise<string> {
    const created = await api('/v1/agents', {
      method: 'POST',
      body: {
        name,
        engine: 'pipeline',
        config: {
          maxReplyMs: MAX_REPLY_MS,
          stt: { provider: 'openai', model: 'whisper-1', baseUrl: engines.baseUrl },
          llm: { provider: 'openai', model: 'endless', baseUrl: model.baseUrl },
          tts: { provider: 'openai', model: 'tts-test', baseUrl: engines.baseUrl, voice: 'alloy' },
        },
      },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  /** Waits until the call's one answer has been played and recorded, then reads its events and transcript. */
  async function settledCall(callId: string): Promise<{ events: { type: string; payload: any }[]; transcript: { role: string; text: string }[] }> {
    return eventually(
      async () => (await api(`/v1/calls/${callId}`)).body,
      (body) => body.transcript?.some((turn: { role: string }) => turn.role === 'assistant'),
      MAX_REPLY_MS + 20_000,
    );
  }

  beforeAll(async () => {
    [model, engines] = await Promise.all([
      EndlessModel.start(),
      FakeOpenAiServer.start({ transcription: () => ({ text: 'Tell me everything.' }), speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)) }) }),
    ]);
    const port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-paced-'));
    server = BuiltServer.spawn({
      WORKERS: '1',
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      ADMIN_API_KEY: ADMIN_KEY,
      TWILIO_ACCOUNT_SID: ACCOUNT_SID,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      OUTBOUND_AUDIO_LEAD_MS: String(LEAD_MS),
      SHUTDOWN_TIMEOUT_MS: '5000',
      // A test that fails before hanging up must not leave the server draining its call for half an hour.
      DRAIN_TIMEOUT_S: '5',
      LOG_LEVEL: 'info',
    });
    await server.healthy(baseUrl, 150_000);
  }, 180_000);

  afterAll(async () => {
    if (server && !(await server.stop(20_000))) throw new Error(`the server did not stop within 20 s of SIGTERM:\n${server.output.slice(-3000)}`);
    await Promise.all([model?.close(), engines?.close()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  function expectPacedAndCut(ledger: ArrivalLedger, settled: Awaited<ReturnType<typeof settledCall>>, frameMs: number): void {
    // At no moment did the caller hold more than the lead ahead of its playback (one frame of rounding).
    expect(ledger.worstAheadMs).toBeLessThanOrEqual(LEAD_MS + frameMs);
    // The reply took as long to arrive as to play, less the lead: not a burst. (Measured from the end
    // of the caller's speech, which the reply cannot precede: a late read of the first frames here
    // cannot shorten it.)
    expect(ledger.lastAt! - ledger.speechEndedAt).toBeGreaterThanOrEqual(MAX_REPLY_MS - LEAD_MS - frameMs);
    // Exactly maxReplyMs of speech: whole frames, the last one completed with silence (the resampler's
    // last partial frame), so at most one frame more than the limit.
    expect(ledger.receivedMs).toBeGreaterThanOrEqual(MAX_REPLY_MS);
    expect(ledger.receivedMs).toBeLessThanOrEqual(MAX_REPLY_MS + frameMs);
    expect(settled.events.filter((event) => event.type === 'reply_limit_reached')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ maxReplyMs: MAX_REPLY_MS }) }),
    ]);
  }

  it('a web call: the browser receives at most the lead ahead of real time, and the reply stops at maxReplyMs', async () => {
    const agentId = await createAgent('endless web');
    const minted = await api(`/v1/agents/${agentId}/web-calls`, { method: 'POST', body: { variables: {} } });
    expect(minted.status).toBe(201);
    const requestsBefore = model.closed.length;
    const client = new WebCallClient(`${baseUrl.replace(/^http/, 'ws')}/v1/web-calls`);
    await client.opened;
    client.start(minted.body.callId, minted.body.token);
    const speech = speech16k();
    const speechStartedAt = performance.now();
    const ledger = new ArrivalLedger(speechStartedAt + (speech.length / 16_000) * 1000);
    client.socket.on('message', (data, isBinary) => {
      if (isBinary) ledger.add((data as Buffer).length / 32);
    });
    await client.stream(speech, 800);

    const settled = await settledCall(minted.body.callId);
    // The model's request was closed by the server once the reply was long enough.
    await model.closed[requestsBefore];
    expectPacedAndCut(ledger, settled, 20);
    client.sendJson({ type: 'hangup' });
    await client.closed;
  }, 60_000);

  it('a Twilio call: the media stream carries at most the lead ahead of real time, and the reply stops at maxReplyMs', async () => {
    const agentId = await createAgent('endless phone');
    const number = `+1555${String(Date.now()).slice(-7)}`;
    expect((await api('/v1/phone-numbers', { method: 'POST', body: { e164: number, agentId } })).status).toBe(201);
    const call = new SimulatedTwilioCall({ serverUrl: baseUrl, publicBaseUrl: baseUrl, authToken: AUTH_TOKEN, accountSid: ACCOUNT_SID, from: '+15557654321', to: number });
    const callId = (await call.dial()).stream?.parameters['callId'];
    expect(callId).toBeDefined();
    await call.connectMedia();
    const requestsBefore = model.closed.length;
    const speech = speechFixture('hours');
    const ledger = new ArrivalLedger(performance.now() + speech.length / 8);
    call.on('message', (message) => {
      if (message.event === 'media') ledger.add(message.payload.length / 8);
    });
    await call.streamAudio(speech, { trailingSilenceMs: 800 });

    const settled = await settledCall(callId!);
    await model.closed[requestsBefore];
    expectPacedAndCut(ledger, settled, 20);
    await call.hangup();
  }, 60_000);
});

function speech16k(): Int16Array {
  const wav = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav'))));
  return wav.samples;
}
