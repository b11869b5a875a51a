/**
 * The first run's agents as a newcomer gets them from the README's two-command start (the server as
 * its own process, no ADMIN_API_KEY): with no local model and no OPENAI_API_KEY only the echo agent,
 * and the log says how to get a pipeline agent; once speech recognition is pulled with
 * `npm run models -- pull` (stand-in Whisper bytes from a local Hub-like server, through the real
 * command) and OPENAI_API_KEY is set, a starter pipeline agent is made, at a first run or at a later
 * start while the organization has none, exactly once. Its config is what the API serves, and a
 * browser call to it is admitted and greets the caller (local Whisper loaded, Flite speaking). With
 * speech recognition, an LLM and a voice pulled and no key anywhere, the first run makes the "Local
 * assistant", which answers a browser call on those models alone.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { freeLoopbackPort } from '@switchboard/testing';
import { installWhisperStandIn } from '../../apps/cli/src/bench/capacity/whisper-stand-in-install';
import { placePiperStandIn, pullLlmStandIn, pullWhisperStandIn } from '../../apps/cli/src/models/pull-stand-in.test-support';
import { eventually } from '../support/eventually';
import { createScratchDatabase, type ScratchDatabase } from '../support/database';
import { BuiltServer } from '../support/built-server';
import { WebCallClient } from '../support/web-call-client';

jest.setTimeout(300_000);

const LINK_LINE = /first run: open http:\/\/localhost:\d+\/#\/first-run\/([A-Za-z0-9_-]+) to sign in/;
const OPENAI_API_KEY = 'sk-test-first-run-starter-agent-000000';

/**
 * A stand-in for the espeak-ng program, which Piper and Kokoro read phonemes from (GPL, installed by
 * the operator, not on this machine): it answers `--version` and prints fixed IPA for any text.
 */
const ESPEAK_STAND_IN = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "eSpeak NG text-to-speech: stand-in"; exit 0; fi
cat > /dev/null
printf 'h_ə_l_ˈoʊ w_ˈɜː_l_d\\n'
`;

interface AgentSummary {
  id: string;
  name: string;
  engine: string;
}

describe('first run: the echo agent, and a pipeline agent once there are engines for one (e2e, the server as its own process)', () => {
  const scratch: ScratchDatabase[] = [];
  const folders: string[] = [];
  let server: BuiltServer | undefined;
  let port: number;
  let baseUrl: string;
  let emptyModelsDir: string;
  let modelsDir: string;

  const folder = (label: string) => {
    const path = mkdtempSync(join(tmpdir(), `switchboard-starter-${label}-`));
    folders.push(path);
    return path;
  };
  /** `ready`: the last bootstrap line this start logs (the console line, unless ADMIN_API_KEY is set). */
  const start = async (database: ScratchDatabase, dataDir: string, env: Record<string, string>, ready = /first run: open|console: http/) => {
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: '',
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      ADMIN_API_KEY: '',
      TWILIO_AUTH_TOKEN: '',
      OPENAI_API_KEY: '',
      WORKERS: '1',
      LOG_FORMAT: 'json',
      ...env,
    });
    await server.healthy(baseUrl, 150_000);
    const running = server;
    // The bootstrap logs before the server listens; the console line comes last of the start-up lines.
    await running.waitForOutput(ready, 30_000);
    return running;
  };
  const stop = async () => {
    const child = server?.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const claimKey = async (output: string): Promise<string> => {
    const token = LINK_LINE.exec(output)?.[1];
    expect(token).toBeDefined();
    const response = await fetch(`${baseUrl}/console/first-run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    expect(response.status).toBe(200);
    return ((await response.json()) as { apiKey: string }).apiKey;
  };
  const api = async (apiKey: string, path: string, method = 'GET', body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const readiness = async () => {
    const response = await fetch(`${baseUrl}/health/ready`);
    expect(response.status).toBe(200);
    return (await response.json()) as { inference: { state: string; fallbacks?: unknown } };
  };
  const agents = async (apiKey: string): Promise<AgentSummary[]> => (await api(apiKey, '/v1/agents?limit=100')).body.data as AgentSummary[];

  beforeAll(async () => {
    port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    emptyModelsDir = folder('no-models');
    modelsDir = folder('models');
    // `npm run models -- pull whisper-base.en`, from a Hub-like server with stand-in bytes.
    expect(await installWhisperStandIn(modelsDir, 'small')).toMatchObject({ code: 0 });
  });

  afterAll(async () => {
    await stop();
    for (const database of scratch) await database.drop();
    for (const path of folders) rmSync(path, { recursive: true, force: true });
  });

  it('without models or a key: only the echo agent, and the log says how to get a pipeline agent; a later start with a stored key makes one, once', async () => {
    const database = await createScratchDatabase('starter');
    scratch.push(database);
    const dataDir = folder('data');

    const first = await start(database, dataDir, { MODELS_DIR: emptyModelsDir });
    // No pulled model: local inference is not started at boot (a remote-only server spends no threads).
    expect((await readiness()).inference).toEqual({ state: 'not_started' });
    expect(first.output).toMatch(/first run: in the console, press Talk next to \\"Echo \(talk to yourself\)\\" \(your own voice back\)\. No pipeline agent yet: a pipeline agent needs speech recognition and an LLM: set OPENAI_API_KEY/);
    expect(first.output).toContain('npm run models -- pull whisper-base.en');
    const apiKey = await claimKey(first.output);
    expect((await agents(apiKey)).map((agent) => [agent.name, agent.engine])).toEqual([['Echo (talk to yourself)', 'echo']]);
    await stop();

    // Speech recognition pulled but no LLM: still no pipeline agent, and the log says what is missing.
    const modelsOnly = await start(database, dataDir, { MODELS_DIR: modelsDir, INFERENCE_DEVICE: 'auto' });
    // A pulled model starts local inference at boot, under INFERENCE_DEVICE=auto: CUDA and WebGPU are
    // passed over on this machine (CPU build, no GPU), each with its reason, in health and in the log.
    const inference = (await readiness()).inference;
    expect(inference).toMatchObject({ state: 'running', requested: 'auto', device: 'cpu' });
    expect(inference.fallbacks).toEqual([
      { provider: 'cuda', reason: expect.stringMatching(/\S/) },
      { provider: 'webgpu', reason: expect.stringMatching(/\S/) },
    ]);
    expect(modelsOnly.output).toContain('inference: CUDA unavailable (');
    expect(modelsOnly.output).toContain('): trying WebGPU');
    expect(modelsOnly.output).toContain('inference: WebGPU unavailable (');
    expect(modelsOnly.output).toMatch(/Inference runtime: CPU execution provider \(requested auto\)/);
    await modelsOnly.waitForOutput('no pipeline agent yet', 10_000);
    expect(modelsOnly.output).toMatch(/no pipeline agent yet: local speech recognition \(whisper-base\.en\) is installed, but a pipeline agent also needs an LLM/);
    expect((await agents(apiKey)).map((agent) => agent.engine)).toEqual(['echo']);
    // The newcomer stores their OpenAI key in the organization's vault (as `npm run secrets -- set openai-api-key` does).
    expect((await api(apiKey, '/v1/secrets', 'POST', { name: 'openai-api-key', value: OPENAI_API_KEY })).status).toBe(201);
    await stop();

    const later = await start(database, dataDir, { MODELS_DIR: modelsDir });
    await later.waitForOutput('created \\"Assistant (OpenAI)\\"', 10_000);
    expect(later.output).toContain('created \\"Assistant (OpenAI)\\" (a pipeline agent: local whisper-base.en, OpenAI gpt-4o-mini, the built-in Flite voice): press Talk next to it in the console');
    expect(later.output).not.toContain(OPENAI_API_KEY);
    const made = await agents(apiKey);
    expect(made.map((agent) => [agent.name, agent.engine])).toEqual([
      ['Assistant (OpenAI)', 'pipeline'],
      ['Echo (talk to yourself)', 'echo'],
    ]);
    // The organization's own key, named from the vault (never the value).
    expect((await api(apiKey, `/v1/agents/${made[0]!.id}`)).body.config.llm).toMatchObject({ provider: 'openai', apiKeySecret: 'openai-api-key' });
    await stop();

    const again = await start(database, dataDir, { MODELS_DIR: modelsDir, OPENAI_API_KEY });
    expect(again.output).not.toContain('Assistant (OpenAI)');
    expect((await agents(apiKey)).filter((agent) => agent.engine === 'pipeline')).toHaveLength(1);
    await stop();
  });

  it("the README's next start (ADMIN_API_KEY and ECHO_AGENT_NUMBER on the same data) binds the number to the first run's echo agent, and never makes a second", async () => {
    const database = await createScratchDatabase('starter');
    scratch.push(database);
    const dataDir = folder('echo');
    const first = await start(database, dataDir, { MODELS_DIR: emptyModelsDir });
    const apiKey = await claimKey(first.output);
    const [echo] = await agents(apiKey);
    expect(echo).toMatchObject({ name: 'Echo (talk to yourself)', engine: 'echo' });
    // Renamed by its owner: it is still the organization's echo agent.
    expect((await api(apiKey, `/v1/agents/${echo!.id}`, 'PATCH', { name: 'My echo' })).status).toBe(200);
    await stop();

    const readmeEnv = { MODELS_DIR: emptyModelsDir, ADMIN_API_KEY: 'sk_local_walkthrough_key_000000', ECHO_AGENT_NUMBER: '+15551230000' };
    const answers = /echo agent answers this number/;
    await start(database, dataDir, readmeEnv, answers);
    await stop();
    await start(database, dataDir, readmeEnv, answers);
    expect((await agents(apiKey)).map((agent) => [agent.id, agent.name, agent.engine])).toEqual([[echo!.id, 'My echo', 'echo']]);
    const numbers = (await api(apiKey, '/v1/phone-numbers')).body.data as { e164: string; agentId: string }[];
    expect(numbers.map(({ e164, agentId }) => ({ e164, agentId }))).toEqual([{ e164: '+15551230000', agentId: echo!.id }]);
    await stop();
  });

  it('with pulled speech recognition and OPENAI_API_KEY: the first run makes the pipeline agent, which the API serves and a browser call reaches', async () => {
    const database = await createScratchDatabase('starter');
    scratch.push(database);
    const running = await start(database, folder('data'), { MODELS_DIR: modelsDir, OPENAI_API_KEY });
    expect(running.output).toContain(
      'first run: in the console, press Talk next to \\"Echo (talk to yourself)\\" (your own voice back) or \\"Assistant (OpenAI)\\" (a pipeline agent: local whisper-base.en, OpenAI gpt-4o-mini, the built-in Flite voice)',
    );
    const apiKey = await claimKey(running.output);
    const assistant = (await agents(apiKey)).find((agent) => agent.engine === 'pipeline');
    expect(assistant?.name).toBe('Assistant (OpenAI)');

    const detail = await api(apiKey, `/v1/agents/${assistant!.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.config).toMatchObject({
      stt: { provider: 'local', model: 'whisper-base.en' },
      llm: { provider: 'openai', model: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY' },
      tts: { provider: 'flite' },
    });
    // Saving the served config back through the API passes the same checks (it is a valid config).
    expect((await api(apiKey, `/v1/agents/${assistant!.id}`, 'PATCH', { config: detail.body.config })).status).toBe(200);

    const admitted = await api(apiKey, `/v1/agents/${assistant!.id}/web-calls`, 'POST', {});
    expect(admitted.status).toBe(201);
    const client = new WebCallClient(`ws://127.0.0.1:${port}/v1/web-calls`);
    await client.opened;
    client.start(admitted.body.callId as string, admitted.body.token as string);
    await client.waitFor((message) => message.type === 'started', 20_000);
    // The greeting is spoken before the caller says anything: its audio and its mark arrive.
    await client.waitFor((message) => message.type === 'mark', 30_000);
    expect(client.frames.length).toBeGreaterThan(10);
    client.sendJson({ type: 'hangup' });
    await client.closed;
  });
  it('with speech recognition, an LLM and a voice pulled and no key: the first run makes the "Local assistant", which answers a browser call', async () => {
    // The previous test's server holds the port.
    await stop();
    const localModels = folder('local-models');
    expect(await pullWhisperStandIn(localModels, 'small')).toMatchObject({ code: 0 });
    expect(await pullLlmStandIn(localModels)).toMatchObject({ code: 0 });
    // The catalog pins the real Piper voice's sha256, which a stand-in cannot match: placed as a pull leaves it.
    await placePiperStandIn(localModels);
    const bin = folder('bin');
    writeFileSync(join(bin, 'espeak-ng'), ESPEAK_STAND_IN);
    chmodSync(join(bin, 'espeak-ng'), 0o755);
    const database = await createScratchDatabase('starter');
    scratch.push(database);

    const running = await start(database, folder('data'), { MODELS_DIR: localModels, PATH: `${bin}:${process.env['PATH'] ?? ''}` });
    // The sign-in link comes first; the agents' line follows once espeak-ng has been asked whether it runs.
    await running.waitForOutput('first run: in the console', 30_000);
    expect(running.output).toContain(
      'first run: in the console, press Talk next to \\"Echo (talk to yourself)\\" (your own voice back) or \\"Local assistant\\" ' +
        '(a pipeline agent: local whisper-base.en, local qwen2.5-0.5b-instruct, the local piper-en_US-lessac-medium voice)',
    );
    expect(running.output).toContain('on   Local LLM (Qwen2.5): qwen2.5-0.5b-instruct');
    const apiKey = await claimKey(running.output);
    const assistant = (await agents(apiKey)).find((agent) => agent.engine === 'pipeline');
    expect(assistant?.name).toBe('Local assistant');
    const { config } = (await api(apiKey, `/v1/agents/${assistant!.id}`)).body;
    expect(config).toMatchObject({
      stt: { provider: 'local', model: 'whisper-base.en' },
      llm: { provider: 'local', model: 'qwen2.5-0.5b-instruct' },
      tts: { provider: 'piper', model: 'piper-en_US-lessac-medium' },
    });
    expect(JSON.stringify(config)).not.toMatch(/apiKey/);

    const admitted = await api(apiKey, `/v1/agents/${assistant!.id}/web-calls`, 'POST', {});
    expect(admitted.status).toBe(201);
    const callId = admitted.body.callId as string;
    const client = new WebCallClient(`ws://127.0.0.1:${port}/v1/web-calls`);
    await client.opened;
    client.start(callId, admitted.body.token as string);
    await client.waitFor((message) => message.type === 'started', 20_000);
    // The greeting, spoken by the pulled voice, has played before the caller speaks.
    await client.waitFor((message) => message.type === 'mark', 30_000);
    const greetingFrames = client.frames.length;
    const question = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav'))));
    await client.stream(question.samples, 800);

    // Heard by local Whisper, answered by the local LLM, spoken by the local voice: an answer turn
    // in the call's transcript, and its audio after the greeting's.
    const answered = (body: any) => (body.transcript ?? []).some((turn: { role: string; source?: string; text: string }) => turn.role === 'assistant' && turn.source !== 'first_message' && turn.text.trim() !== '');
    const detail = await eventually(async () => (await api(apiKey, `/v1/calls/${callId}`)).body, answered, 90_000);
    expect(detail.transcript.find((turn: { role: string }) => turn.role === 'user')).toBeDefined();
    await eventually(() => Promise.resolve(client.frames.length), (frames) => frames > greetingFrames, 30_000);
    client.sendJson({ type: 'hangup' });
    await client.closed;
  });
});
