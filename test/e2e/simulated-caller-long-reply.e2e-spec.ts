/**
 * `npm run call` as a user runs it (the command in its own process, PORT from its environment, no
 * other flag than its input and output) against the built server and a pipeline agent whose answer
 * plays for several seconds. The caller must stay on the line until the whole answer has been heard:
 * the server's transcript says the answer was heard in full (every mark came back before the hang-up),
 * and the saved WAV holds all of its audio. The caller speaks at once, so the agent's greeting meets
 * a caller who speaks first: it must reach the transcript, not vanish.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { FakeOpenAiServer, freeLoopbackPort } from '@switchboard/testing';
import { apiRequest, type ApiRequestInit } from '../support/api-request';
import { BuiltServer } from '../support/built-server';
import { runCallCommand } from '../support/call-command';
import { toneSpeechFor } from '../support/conversation-agents';
import { eventually } from '../support/eventually';

jest.setTimeout(240_000);

const AUTH_TOKEN = 'long-reply-auth-token-0123456789abcdef';
const ADMIN_KEY = 'long-reply-admin-key-0123456789abcdef';
const NUMBER = '+15551239876';
const GREETING = 'Thanks for calling Acme.';
/** About 6 s of speech from the fake voice (30 ms a character), in three sentences. */
const ANSWER = [
  'We are open from nine in the morning until five in the evening on weekdays. ',
  'On Saturdays we open at ten and close at two in the afternoon. ',
  'On Sundays and public holidays the office stays closed all day.',
];
const ANSWER_MS = toneSpeechFor(ANSWER.join('')).length / 24;

/** Milliseconds of `samples` (8 kHz) in 20 ms windows loud enough to be the agent's voice (the tone is at -12 dBFS). */
function audibleMs(samples: Int16Array): number {
  let loudWindows = 0;
  for (let start = 0; start + 160 <= samples.length; start += 160) {
    let energy = 0;
    for (let index = start; index < start + 160; index++) energy += samples[index]! * samples[index]!;
    if (Math.sqrt(energy / 160) > 1000) loudWindows += 1;
  }
  return loudWindows * 20;
}

describe('npm run call hears a long pipeline reply to its end (e2e, the built server and the command as two processes)', () => {
  let server: BuiltServer;
  let engines: FakeOpenAiServer;
  let dataDir: string;
  let port: number;
  let baseUrl: string;

  const api = (path: string, init: Omit<ApiRequestInit, 'apiKey'> = {}) => apiRequest(baseUrl, path, { ...init, apiKey: ADMIN_KEY });

  beforeAll(async () => {
    engines = await FakeOpenAiServer.start({
      transcription: () => ({ text: 'When are you open?' }),
      chat: { text: ANSWER },
      speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)) }),
    });
    port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-long-reply-'));
    server = BuiltServer.spawn({
      WORKERS: '1',
      PORT: String(port),
      // Unset: the server signs against its default, http://localhost:<PORT>, and so does the caller.
      PUBLIC_BASE_URL: '',
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      ADMIN_API_KEY: ADMIN_KEY,
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      DRAIN_TIMEOUT_S: '5',
      LOG_LEVEL: 'warn',
    });
    await server.healthy(baseUrl, 150_000);
    const agent = await api('/v1/agents', {
      method: 'POST',
      body: {
        name: 'Long answers',
        engine: 'pipeline',
        config: {
          firstMessage: GREETING,
          stt: { provider: 'openai', model: 'whisper-1', baseUrl: engines.baseUrl },
          llm: { provider: 'openai', model: 'gpt-test', baseUrl: engines.baseUrl },
          tts: { provider: 'openai', model: 'tts-test', baseUrl: engines.baseUrl, voice: 'alloy' },
        },
      },
    });
    expect(agent.status).toBe(201);
    expect((await api('/v1/phone-numbers', { method: 'POST', body: { e164: NUMBER, agentId: agent.body.id } })).status).toBe(201);
  }, 200_000);

  afterAll(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await engines?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stays on the line until the answer has played in full, and the greeting the caller spoke over is in the transcript', async () => {
    expect(ANSWER_MS).toBeGreaterThan(5_000);
    const out = join(dataDir, 'agent.wav');
    const caller = await runCallCommand(['--to', NUMBER, '--wav', 'test/fixtures/speech/hours.16k.wav', '--out', out], { TWILIO_AUTH_TOKEN: AUTH_TOKEN, PORT: String(port) });
    expect(caller.output).toMatch(/Heard the agent's reply to its end/);
    expect(caller.code).toBe(0);

    const calls = await api('/v1/calls?limit=1');
    const callId = calls.body.data[0].id as string;
    const call = await eventually(
      async () => (await api(`/v1/calls/${callId}`)).body,
      (body) => body.status === 'completed' && body.transcript?.some((turn: { source: string }) => turn.source === 'speech'),
      20_000,
    );
    const turns = (call.transcript as { role: string; source: string; text: string; interrupted: boolean }[]).map(({ role, source, text, interrupted }) => ({ role, source, text, interrupted }));
    // Heard in full: had the caller hung up during it, the answer would be recorded as cut (call_ended).
    expect(turns.filter((turn) => turn.role === 'assistant' && turn.source === 'speech')).toEqual([
      { role: 'assistant', source: 'speech', text: ANSWER.join('').trim(), interrupted: false },
    ]);
    expect(turns.filter((turn) => turn.source === 'first_message').map((turn) => turn.text)).toEqual([GREETING]);

    // What the caller saved holds the whole answer (and whatever it heard of the greeting).
    const heard = readWav(new Uint8Array(readFileSync(out)));
    expect(audibleMs(heard.samples)).toBeGreaterThanOrEqual(ANSWER_MS - 100);
  });
});
