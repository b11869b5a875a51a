import type { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { FakeOpenAiServer } from '@switchboard/testing';
import type { CapacitySnapshot } from '../../apps/server/src/inference/capacity/compute-capacity';
import { ALL_AGENTS_BUSY_MESSAGE } from '../../apps/server/src/twilio/webhooks/inbound-call.service';
import { bindAgent, callTo, fakePipelineEngines, toneSpeechFor } from '../support/conversation-agents';
import { createTestPrisma, uniqueE164 } from '../support/database';
import { sample } from '../support/prometheus-text';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

const API_KEY_SECRET = 'inference-capacity-openai-key';
const FAKE_API_KEY = 'sk-fake-capacity';
/**
 * One inference worker planned to 5% of its time. These callers' agents use remote engines, so the
 * only local model is the Silero VAD, a streaming model (every call feeds it 31 windows a second):
 * it counts by the load it measurably puts on the worker (a lone call's ~1.6 %, less per call as
 * batches grow), so calls are admitted until that load passes 5 %, a dozen or so here.
 */
const MAX_UTILISATION = 0.05;
/** Far more calls than the planned share can take: the loop must end in a refusal well before. */
const MOST_CALLS = 80;
/**
 * Between dials, once the new call's audio flows: the streaming load is measured over a moving 5 s,
 * so calls are added at a pace it can follow. A pace, not a wait for something: nothing is asserted
 * after it, and what is asserted (a refusal within MOST_CALLS dials) holds at any machine's speed,
 * a slower machine only measuring a higher load per call and refusing sooner.
 */
const DIAL_GAP_MS = 400;

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

  const capacity = async (): Promise<CapacitySnapshot> => (await server.api('/v1/organization')).body.inferenceCapacity as CapacitySnapshot;
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
    // The VAD is a streaming model: no per-turn cost to price a call with, and no bound while its load is under the share.
    expect(measured).toMatchObject({ workers: 1, liveCalls: 1, streamingModels: ['silero-vad-v5'], costPerCall: null, callsHeadroom: null });
    expect(measured.costPerCallSecond['silero-vad-v5']).toBeGreaterThan(0);
    expect(measured.streamingUtilisation).toBeGreaterThan(0);
    expect(measured.streamingUtilisation).toBeLessThan(MAX_UTILISATION);

    // Calls until the first refusal, then on until three: the load the admitted ones add keeps it
    // clearly past the share (right at it, the VAD's measured load wavers by a few tenths of a percent).
    const refusals: Array<Awaited<ReturnType<typeof dial>>> = [];
    for (let attempt = 0; attempt < MOST_CALLS && refusals.length < 3; attempt++) {
      const outcome = await dial();
      if (outcome.rejected) refusals.push(outcome);
      else await eventually(capacity, (value) => value.liveCalls === live.length && value.reservedCalls === 0);
      await new Promise((resolve) => setTimeout(resolve, DIAL_GAP_MS));
    }
    const refused = refusals[0];
    expect(refusals).toHaveLength(3);
    // Refused by the rule, with calls live (an idle instance always takes one).
    expect(live.length).toBeGreaterThanOrEqual(2);
    console.log(`inference capacity e2e: ${live.length} calls admitted, ${refusals.length} refused`);
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
    // What refused it: the VAD's measured load on the worker past the planned share.
    expect(web.body.predictedUtilisation).toBeGreaterThan(MAX_UTILISATION);

    const text = await metrics();
    expect(sample(text, 'switchboard_call_admissions_total{direction="inbound",outcome="capacity"}')).toBe(refusals.length);
    expect(sample(text, 'switchboard_call_admissions_total{direction="web",outcome="capacity"}')).toBe(1);
    expect(sample(text, 'switchboard_inference_headroom_calls')).toBe(0);
    expect(sample(text, 'switchboard_inference_max_utilisation')).toBe(MAX_UTILISATION);
    expect(sample(text, 'switchboard_inference_cost_per_call_second{model="silero-vad-v5"}')).toBeGreaterThan(0);
    expect(sample(text, 'switchboard_inference_utilisation')).toBeGreaterThan(0);

    // All callers but one hang up (fewer calls batch less, so each costs more): once the VAD's load is
    // back under the share, calls are admitted again.
    for (const call of live.splice(0, live.length - 1)) await call.hangup();
    const roomy = await eventually(capacity, (value) => value.streamingUtilisation < MAX_UTILISATION * 0.9, 15_000);
    expect(roomy.streamingUtilisation).toBeLessThan(MAX_UTILISATION);
    expect((await dial()).rejected).toBe(false);
  }, 120_000);
});
