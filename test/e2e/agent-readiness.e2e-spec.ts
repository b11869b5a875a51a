import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { FakeOpenAiServer } from '@switchboard/testing';
import { AGENT_NOT_READY_MESSAGE } from '../../apps/server/src/agents-api/agent-not-ready';
import { callTo, toneSpeechFor } from '../support/conversation-agents';
import { uniqueE164 } from '../support/database';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebCallClient } from '../support/web-call-client';

/**
 * An agent that cannot work says so before anyone calls it: its readiness names each problem at
 * its config path, a browser call to it is refused with those problems, and a phone call is
 * declined in words and stored with why. Once the missing key is stored, the same agent reads
 * ready and answers.
 */
const KEY_SECRET = 'readiness-engine-key';
const ENGINE_KEY = 'sk-readiness-e2e';

describe('agent readiness (e2e)', () => {
  let server: TestServer;
  let engines: FakeOpenAiServer;

  beforeAll(async () => {
    engines = await FakeOpenAiServer.start({
      apiKey: ENGINE_KEY,
      transcription: () => ({ text: 'When are you open?' }),
      chat: () => ({ text: ['We open at nine.'] }),
      speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)) }),
    });
    server = await startTestServer();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await engines?.close();
  });

  it("reads an agent on OpenAI's endpoints with no key as not ready, with the problem at each engine's path", async () => {
    const created = await server.api('/v1/agents', { method: 'POST', body: { name: 'no key', engine: 'pipeline', config: {} } });
    expect(created.status).toBe(201);
    expect(created.body.readiness.ready).toBe(false);
    const paths = created.body.readiness.problems.map((problem: { path: string }) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(['stt.apiKeySecret', 'llm.apiKeySecret']));
    const listed = await server.api('/v1/agents?limit=100');
    expect(listed.body.data.find((agent: { id: string }) => agent.id === created.body.id).readiness).toEqual(created.body.readiness);
  });

  it('refuses browser and phone calls to it, saying why, until the key is stored; then it answers', async () => {
    const engine = { provider: 'openai', baseUrl: engines.baseUrl, apiKeySecret: KEY_SECRET };
    const config = { firstMessage: null, stt: { ...engine, model: 'whisper-1' }, llm: { ...engine, model: 'gpt-test' }, tts: { ...engine, model: 'tts-test', voice: 'alloy' } };
    const created = await server.api('/v1/agents', { method: 'POST', body: { name: 'key later', engine: 'pipeline', config } });
    expect(created.status).toBe(201);
    const agentId = created.body.id as string;
    const missingKey = ['stt', 'llm', 'tts'].map((path) => ({ path: `${path}.apiKeySecret`, message: `no secret named "${KEY_SECRET}" in this organization; create it with POST /v1/secrets` }));
    expect(created.body.readiness).toEqual({ ready: false, problems: missingKey });
    expect((await server.api(`/v1/agents/${agentId}`)).body.readiness).toEqual({ ready: false, problems: missingKey });

    // A browser call: 409 with the problems, and no call is admitted.
    const refusedWebCall = await server.api(`/v1/agents/${agentId}/web-calls`, { method: 'POST', body: {} });
    expect(refusedWebCall.status).toBe(409);
    expect(refusedWebCall.body).toMatchObject({ statusCode: 409, code: 'agent_not_ready', problems: missingKey });
    expect(refusedWebCall.body.message).toContain('stt.apiKeySecret');

    // A phone call: declined politely before any stream, and stored with why.
    const number = uniqueE164();
    expect((await server.api('/v1/phone-numbers', { method: 'POST', body: { e164: number, agentId } })).status).toBe(201);
    const phoneCall = callTo(server, number);
    expect(await phoneCall.dial()).toMatchObject({ stream: null, rejected: true, sayText: AGENT_NOT_READY_MESSAGE });
    const refusedCall = await eventually(
      async () => (await server.api(`/v1/calls?agentId=${agentId}`)).body.data,
      (calls: { endReason: string }[]) => calls.length === 1,
    );
    expect(refusedCall[0]).toMatchObject({ endReason: 'agent_not_ready', toNumber: number });
    expect(engines.requests).toHaveLength(0);

    // The key is stored: the same agent reads ready and a browser call to it is answered.
    await storeSecret(server, KEY_SECRET, ENGINE_KEY);
    expect((await server.api(`/v1/agents/${agentId}`)).body.readiness).toEqual({ ready: true, problems: [] });
    const minted = await server.api(`/v1/agents/${agentId}/web-calls`, { method: 'POST', body: {} });
    expect(minted.status).toBe(201);
    const client = new WebCallClient(`${server.serverUrl.replace(/^http/, 'ws')}/v1/web-calls`);
    await client.opened;
    client.start(minted.body.callId, minted.body.token);
    await client.stream(speech16k(), 800);
    await client.waitFor((message) => message.type === 'mark', 15_000);
    const answered = await eventually(
      async () => (await server.api(`/v1/calls/${minted.body.callId}`)).body,
      (detail) => detail.transcript?.some((turn: { role: string; text: string }) => turn.role === 'assistant' && turn.text === 'We open at nine.'),
      15_000,
    );
    expect(answered.transcript[0]).toMatchObject({ role: 'user', text: 'When are you open?' });
    client.sendJson({ type: 'hangup' });
    await client.closed;
  }, 60_000);
});

function speech16k(): Int16Array {
  return readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav')))).samples;
}
