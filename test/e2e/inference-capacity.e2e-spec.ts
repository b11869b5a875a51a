import { FakeOpenAiServer, type SimulatedTwilioCall } from '@switchboard/testing';
import { ALL_AGENTS_BUSY_MESSAGE } from '../../apps/server/src/twilio/inbound-call.service';
import { bindAgent, callTo, fakePipelineEngines, toneSpeechFor } from '../support/conversation-agents';
import { createTestPrisma, uniqueE164 } from '../support/database';
import { sample } from '../support/prometheus-text';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

const API_KEY_SECRET = 'inference-capacity-openai-key';
const FAKE_API_KEY = 'sk-fake-capacity';
/**
 * One inference worker planned to 10% of its time: a few calls' Silero VAD fills that on any machine
 * (one call's VAD, in batches of one, measured 1.6-1.7% of a worker on this 2-core machine), so
 * calls are refused after a few and the test stays small. The rule is the same at the default 0.8
 * with heavier local models (bench:load --local-asr).
 */
const MAX_UTILISATION = 0.1;
/** Far more calls than the planned share can take: the loop must end in a refusal well before. */
const MOST_CALLS = 40;

interface Capacity {
  state: 'measuring' | 'measured';
  workers: number;
  maxUtilisation: number;
  utilisation: number;
  liveCalls: number;
  reservedCalls: number;
  costPerCall: number | null;
  predictedUtilisation: number | null;
  callsHeadroom: number | null;
  costPerCallSecond: Record<string, number>;
}

/**
 * Admission by inference capacity (issue 17), against the real server and its real Silero VAD in
 * inference worker threads: the server measures what each call costs its workers, admits calls
 * while the predicted load stays within INFERENCE_MAX_UTILISATION, refuses the next one politely
 * (reason `capacity`, counted like the concurrency limit), shows the headroom in GET
 * /v1/organization and /metrics, and admits again once a call ends.
 */
describe('admission by inference capacity (e2e)', () => {
  let server: TestServer;
  let openai: FakeOpenAiServer;
  const prisma = createTestPrisma(2);
  const live: SimulatedTwilioCall[] = [];

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: 'hello' }),
      chat: () => ({ text: ['Hello.'] }),
      speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)) }),
    });
    server = await startTestServer({ INFERENCE_WORKERS: '1', INFERENCE_MAX_UTILISATION: String(MAX_UTILISATION) });
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(live.map((call) => call.hangup().catch(() => undefined)));
    await server?.close();
    await openai?.close();
    await prisma.$disconnect();
  });

  const capacity = async (): Promise<Capacity> => (await server.api('/v1/organization')).body.inferenceCapacity as Capacity;
  const metrics = async (): Promise<string> => (await fetch(`${server.serverUrl}/metrics`)).text();

  it('admits calls while their measured cost fits, refuses the next one for capacity, and admits again when a call ends', async () => {
    const { agentId, number } = await bindAgent(server, { engine: 'pipeline', config: fakePipelineEngines(openai.baseUrl, API_KEY_SECRET), name: 'capacity agent' });
    const dial = async (): Promise<{ call: SimulatedTwilioCall; rejected: boolean; sayText: string }> => {
      const call = callTo(server, number, { from: uniqueE164() });
      const twiml = await call.dial();
      if (!twiml.rejected) {
        // The caller's line streams silence from here on: every 20 ms goes through the VAD.
        await call.connectMedia();
        live.push(call);
      }
      return { call, rejected: twiml.rejected, sayText: twiml.sayText };
    };

    // Nothing measured yet: every call is admitted, and the API says why.
    expect(await capacity()).toMatchObject({ state: 'measuring', maxUtilisation: MAX_UTILISATION, callsHeadroom: null });
    expect((await dial()).rejected).toBe(false);
    // Ten call-seconds of the first call measure its cost.
    const measured = await eventually(capacity, (value) => value.state === 'measured', 25_000);
    expect(measured).toMatchObject({ workers: 1, liveCalls: 1 });
    expect(measured.costPerCallSecond['silero-vad-v5']).toBeGreaterThan(0);
    expect(measured.callsHeadroom).toBeGreaterThanOrEqual(0);

    // Calls until the first refusal.
    let refused: Awaited<ReturnType<typeof dial>> | undefined;
    for (let attempt = 0; attempt < MOST_CALLS && refused === undefined; attempt++) {
      const outcome = await dial();
      if (outcome.rejected) refused = outcome;
    }
    expect(refused).toBeDefined();
    // Refused by the rule, with calls live (an idle instance always takes one).
    expect(live.length).toBeGreaterThanOrEqual(2);
    console.log(`inference capacity e2e: ${live.length} calls admitted before the refusal`);
    expect(refused?.sayText).toBe(ALL_AGENTS_BUSY_MESSAGE);
    const stored = await prisma.call.findUniqueOrThrow({ where: { twilioCallSid: refused!.call.parties.callSid } });
    expect(stored).toMatchObject({ direction: 'inbound', endReason: 'capacity', agentId });
    await expect(prisma.callRefusal.count({ where: { organizationId: stored.organizationId!, reason: 'capacity', direction: 'inbound', fromNumber: stored.fromNumber } })).resolves.toBe(1);

    // Every admitted call is counted, live or about to be; one more was predicted past the planned share.
    const full = await capacity();
    expect(full.liveCalls + full.reservedCalls).toBe(live.length);

    // A browser call is refused for the same reason: 503, with the figures that refused it and when to try again.
    const web = await server.api(`/v1/agents/${agentId}/web-calls`, { method: 'POST', body: {} });
    expect(web.status).toBe(503);
    expect(web.body).toMatchObject({ code: 'capacity', maxUtilisation: MAX_UTILISATION, workers: 1, retryAfterSeconds: 30 });
    expect(web.body.predictedUtilisation + web.body.costPerCall / web.body.workers).toBeGreaterThan(MAX_UTILISATION);

    const text = await metrics();
    expect(sample(text, 'switchboard_call_admissions_total{direction="inbound",outcome="capacity"}')).toBe(1);
    expect(sample(text, 'switchboard_call_admissions_total{direction="web",outcome="capacity"}')).toBe(1);
    expect(sample(text, 'switchboard_inference_headroom_calls')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'switchboard_inference_max_utilisation')).toBe(MAX_UTILISATION);
    expect(sample(text, 'switchboard_inference_cost_per_call_second{model="silero-vad-v5"}')).toBeGreaterThan(0);
    expect(sample(text, 'switchboard_inference_utilisation')).toBeGreaterThan(0);

    // Two callers hang up: once their meters close, there is room again.
    for (const call of live.splice(0, 2)) await call.hangup();
    const roomy = await eventually(capacity, (value) => (value.callsHeadroom ?? 0) >= 1, 10_000);
    expect(roomy.callsHeadroom).toBeGreaterThanOrEqual(1);
    expect((await dial()).rejected).toBe(false);
  }, 90_000);
});
