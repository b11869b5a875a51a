/**
 * The recipe for an LLM served on the same machine (Ollama, llama.cpp's llama-server, vLLM), as the
 * docs give it: the server started with OUTBOUND_ALLOWED_HOSTS=127.0.0.1, and an agent whose `llm`
 * is `{provider: 'openai', baseUrl: 'http://127.0.0.1:<port>/v1', model}` with no key at all. A
 * FakeOpenAiServer stands in for Ollama: it listens on loopback and takes no key, as Ollama does.
 * Speech recognition is local (`npm run models -- pull whisper-base.en`, stand-in weights) and the
 * voice is the built-in Flite, so no provider key is set anywhere. A browser call to the agent is
 * answered with the local server's reply, and the request the server sent carried no Authorization.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { FakeOpenAiServer, freeLoopbackPort } from '@switchboard/testing';
import { installWhisperStandIn } from '../../apps/cli/src/bench/capacity/whisper-stand-in-install';
import { BuiltServer } from '../support/built-server';
import { createScratchDatabase, type ScratchDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { WebCallClient } from '../support/web-call-client';

jest.setTimeout(300_000);

const ADMIN_API_KEY = 'sk_local_llm_recipe_key_000000';
/** The name the local server knows the model by (Ollama's tag for Qwen2.5 1.5B Instruct). */
const LOCAL_MODEL = 'qwen2.5:1.5b';

function hoursQuestion(): Int16Array {
  const wav = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav'))));
  return wav.samples;
}

describe('an agent on an OpenAI-compatible LLM server on this machine, no key (e2e, the server as its own process)', () => {
  const folders: string[] = [];
  let database: ScratchDatabase;
  let ollama: FakeOpenAiServer;
  let server: BuiltServer | undefined;
  let baseUrl: string;
  let port: number;

  const folder = (label: string) => {
    const path = mkdtempSync(join(tmpdir(), `switchboard-local-llm-${label}-`));
    folders.push(path);
    return path;
  };
  const api = async (path: string, method = 'GET', body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    ollama = await FakeOpenAiServer.start({ chat: () => ({ text: ['We open at nine', ' tomorrow morning.'], usage: { promptTokens: 30, completionTokens: 8 } }) });
    const modelsDir = folder('models');
    expect(await installWhisperStandIn(modelsDir, 'small')).toMatchObject({ code: 0 });
    database = await createScratchDatabase('local_llm');
    port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: '',
      DATABASE_URL: database.url,
      DATA_DIR: folder('data'),
      MODELS_DIR: modelsDir,
      ADMIN_API_KEY,
      // The recipe's one server setting: tenant-directed requests may reach this machine's loopback.
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      OPENAI_API_KEY: '',
      TWILIO_AUTH_TOKEN: '',
      WORKERS: '1',
      LOG_FORMAT: 'json',
    });
    await server.healthy(baseUrl, 150_000);
  });

  afterAll(async () => {
    const child = server?.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await ollama?.close();
    await database?.drop();
    for (const path of folders) rmSync(path, { recursive: true, force: true });
  });

  it('saves the config with no apiKeySecret, and a browser call is answered by the local server', async () => {
    const config = {
      systemPrompt: 'You are the front desk of Acme. Answer in one short sentence.',
      firstMessage: 'Hello, Acme front desk.',
      stt: { provider: 'local', model: 'whisper-base.en' },
      llm: { provider: 'openai', baseUrl: ollama.baseUrl, model: LOCAL_MODEL },
      tts: { provider: 'flite' },
    };
    const created = await api('/v1/agents', 'POST', { name: 'Local LLM', engine: 'pipeline', config });
    expect(created.status).toBe(201);
    const stored = (await api(`/v1/agents/${created.body.id}`)).body.config.llm;
    expect(stored).toEqual({ provider: 'openai', baseUrl: ollama.baseUrl, model: LOCAL_MODEL });

    const admitted = await api(`/v1/agents/${created.body.id}/web-calls`, 'POST', {});
    expect(admitted.status).toBe(201);
    const callId = admitted.body.callId as string;
    const client = new WebCallClient(`ws://127.0.0.1:${port}/v1/web-calls`);
    await client.opened;
    client.start(callId, admitted.body.token as string);
    await client.waitFor((message) => message.type === 'started', 20_000);
    // The greeting (Flite) has played before the caller speaks.
    await client.waitFor((message) => message.type === 'mark', 30_000);
    await client.stream(hoursQuestion(), 800);

    // The caller's turn went to the local server: its chat endpoint, the model by its local name, no key.
    const [request] = await eventually(() => Promise.resolve(ollama.requestsTo('chat')), (requests) => requests.length > 0, 60_000);
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.json).toMatchObject({ model: LOCAL_MODEL, stream: true });

    // Its reply is what the caller was answered with.
    const detail = await eventually(
      async () => (await api(`/v1/calls/${callId}`)).body,
      (body) => (body.transcript ?? []).some((turn: { role: string; source?: string }) => turn.role === 'assistant' && turn.source !== 'first_message'),
      60_000,
    );
    const reply = detail.transcript.find((turn: { role: string; source?: string }) => turn.role === 'assistant' && turn.source !== 'first_message');
    expect(reply.text).toBe('We open at nine tomorrow morning.');
    client.sendJson({ type: 'hangup' });
    await client.closed;
  });
});
