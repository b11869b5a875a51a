import { randomBytes } from 'node:crypto';
import { sineTone } from '@switchboard/audio';
import { FakeOpenAiServer, FakeTwilioRestServer, type RecordedRequest } from '@switchboard/testing';
import { LINE_UNAVAILABLE_MESSAGE } from '../../apps/server/src/twilio/webhooks/inbound-call.service';
import { callTo, dialAgent, speechFixture } from '../support/conversation-agents';
import {
  decimalOf,
  expectedLine,
  millisecondsOfSamples,
  PER_AUDIO_MINUTE,
  PER_MILLION_CHARACTERS,
  PER_MILLION_TOKENS,
  PER_MINUTE,
  PER_SECOND_OF_MICROSECONDS,
  pricedFields,
  startedUnits,
  sumOf,
  type ExpectedCostLine,
} from '../support/cost-recompute';
import { createOtherOrganizationKey, createRepositories, createTestPrisma, uniqueE164 } from '../support/database';
import { postCall, postSignedTwilioForm, setUpLine, type OrganizationLine } from '../support/outbound-calls';
import { storeSecret } from '../support/secrets';
import { connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * The per-call cost ledger end to end: a real inbound pipeline call (simulated Twilio caller, real
 * Silero VAD, local OpenAI-compatible fakes), billed with a catalog this file sets for its organization
 * as the deployment operator (OPERATOR_API_KEY: what calls are billed with is the operator's), and the ledger
 * recomputed here from what the test itself saw (timestamps, audio sent, requests the fakes got,
 * usage they reported), with integer arithmetic of its own. Then Twilio's late billed minutes, the
 * usage report, budgets and their hard limit. Everything runs in an organization of this file's own:
 * other e2e files run calls in the default organization at the same time.
 *
 * Webhook events are checked in the delivery log (GET /v1/webhook-deliveries, whose detail holds the
 * exact body to be sent), not at a live receiver: the delivery worker claims due deliveries of EVERY
 * organization, so turning it on here would deliver webhooks.e2e-spec's events with this server's
 * timings while that file runs in parallel.
 */

/** The organization's engine key, in its vault. */
const API_KEY_SECRET = 'call-cost-openai-key';
const FAKE_API_KEY = 'sk-fake-cost-e2e';
/** This file's operator key: only the operator sets the prices an organization is billed with. */
const OPERATOR_KEY = `op_test_call_cost_${randomBytes(24).toString('hex')}`;

/** Distinctive prices (µ$), several chosen so that amounts need rounding (half up) to whole µ$. */
const PRICES = {
  telephonyInboundPerMinute: 10_000,
  telephonyOutboundPerMinute: 20_000,
  mediaStreamsPerMinute: 3_000,
  sttPerAudioMinute: 7_000,
  ttsPerMillionCharacters: 17_000_000,
  ttsPerAudioMinute: 11_000,
  llmInputPerMillionTokens: 333_333,
  llmCachedInputPerMillionTokens: 123_457,
  llmOutputPerMillionTokens: 1_500_000,
  cpuPerSecond: 1_234,
  gpuPerSecond: 2_500,
  platformFeePerMinute: 5_000,
  // Priced, but only for realtime agents: a pipeline call must show no line for it.
  realtimeAudioInputPerMinute: 60_000,
} as const;

/** What the fake model reports for every reply: 1000 uncached + 200 cached input tokens, 35 output. */
const CHAT_USAGE = { promptTokens: 1200, cachedTokens: 200, completionTokens: 35 };
const REPLY_PIECES = ['We open at nine.', ' See you then!'];
const STT_SAMPLE_RATE = 16_000;
const TTS_SAMPLE_RATE = 24_000;

/** One synthesis as the fake TTS served it. */
interface Synthesis {
  input: string;
  samples: number;
}

/** Agent speech: 30 ms per character plus 5 samples, so the audio length is not a whole number of ms. */
function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: TTS_SAMPLE_RATE, sampleCount: text.length * 30 * 24 + 5, amplitudeDbfs: -12 });
}

function wavSamples(request: RecordedRequest): number {
  const wav = request.wav!;
  expect(wav.sampleRate).toBe(STT_SAMPLE_RATE);
  return wav.samples.length / wav.channelCount;
}

function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

describe('per-call cost ledger (e2e)', () => {
  let server: TestServer;
  let openai: FakeOpenAiServer;
  let twilioRest: FakeTwilioRestServer;
  const prisma = createTestPrisma(2);
  const repositories = createRepositories(prisma);
  const synthesized: Synthesis[] = [];
  /** Before any call of this file started: the start of the usage window. */
  const fileStartedAt = new Date(Date.now() - 60_000);
  let orgKey: string;
  let organizationId: string;
  /** The organization's own Twilio account: its number is on it, its calls are signed with it. */
  let account: TenantTwilioAccount;
  let line: OrganizationLine;
  let catalog: { id: string; version: number };
  let subscriptionId: string;
  /** Every call of this organization that has been priced, in order. */
  const pricedCallIds: string[] = [];
  /** The main call, once priced: later tests correct it. */
  let mainCall: { id: string; callSid: string; measuredSeconds: number; chargeLines: unknown[]; totalMicros: number } | undefined;

  const api = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { apiKey: orgKey, ...init });
  const costOf = async (callId: string) => (await api(`/v1/calls/${callId}/cost`)).body;
  const pricedCost = (callId: string) => eventually(() => costOf(callId), (cost) => cost?.status === 'priced', 30_000);
  const deliveryPayloads = async (eventType: 'call.cost' | 'usage.threshold'): Promise<any[]> => {
    const page = await api(`/v1/webhook-deliveries?limit=100&subscriptionId=${subscriptionId}&eventType=${eventType}`);
    expect(page.status).toBe(200);
    // Oldest first; the list is newest first.
    const deliveries = [...page.body.data].reverse();
    return Promise.all(deliveries.map(async (delivery: { id: string }) => (await api(`/v1/webhook-deliveries/${delivery.id}`)).body.payload));
  };
  const callOut = () => postCall(server, orgKey, { agentId: line.agentId, to: uniqueE164(), from: line.number });
  const callIn = () => callTo(server, line.number, { from: uniqueE164(), account });

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: 'What time do you open tomorrow morning?' }),
      chat: () => ({ text: REPLY_PIECES, usage: CHAT_USAGE }),
      speech: (request) => {
        const input = String((request.json as { input: string }).input);
        const pcm = speechFor(input);
        synthesized.push({ input, samples: pcm.length });
        return { pcm, chunkBytes: [4800] };
      },
    });
    twilioRest = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    server = await startTestServer({
      TWILIO_ACCOUNT_SID: twilioRest.accountSid,
      TWILIO_AUTH_TOKEN: twilioRest.authToken,
      TWILIO_API_BASE_URL: twilioRest.baseUrl,
      OPERATOR_API_KEY: OPERATOR_KEY,
    });
    orgKey = await createOtherOrganizationKey(repositories, 'call-cost');
    organizationId = (await api('/v1/organization')).body.id;
    account = await connectTwilioAccount(server, orgKey, twilioRest);
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY, orgKey);
    const engine = { baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET };
    line = await setUpLine(server, orgKey, {
      engine: 'pipeline',
      config: {
        stt: { provider: 'openai', model: 'whisper-1', ...engine },
        llm: { provider: 'openai', model: 'gpt-test', ...engine },
        tts: { provider: 'openai', model: 'tts-test', voice: 'alloy', ...engine },
        // Nothing but the one exchange each test scripts: no idle prompt, no barge-in on line noise.
        idle: { promptAfterMs: 600_000 },
        interruptions: { enabled: false },
      },
    }, { twilio: twilioRest, account });
    const created = await server.api(`/v1/organizations/${organizationId}/price-catalog`, { apiKey: OPERATOR_KEY, method: 'POST', body: { prices: PRICES } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ organizationId, setBy: 'operator', version: 1, currency: 'USD', prices: PRICES });
    catalog = { id: created.body.id, version: created.body.version };
    // The organization sees it as the catalog its calls are billed with.
    const catalogs = await api('/v1/price-catalog');
    expect(catalogs.status).toBe(200);
    expect(catalogs.body.inForce).toMatchObject({ id: catalog.id, setBy: 'operator' });
    // Events are written to the outbox only for subscriptions that exist when they happen.
    const subscription = await api('/v1/webhook-subscriptions', {
      method: 'POST',
      body: { url: 'http://127.0.0.1:9/cost-hooks', events: ['call.cost', 'usage.threshold'] },
    });
    expect(subscription.status).toBe(201);
    subscriptionId = subscription.body.id;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([openai?.close(), twilioRest?.close()]);
    await prisma.$disconnect();
  });

  it('prices an inbound pipeline call exactly as recomputed from what the caller and the fake engines saw', async () => {
    const sttBefore = openai.requestsTo('transcriptions').length;
    const chatBefore = openai.requestsTo('chat').length;
    const ttsBefore = synthesized.length;
    const dialledAt = performance.now();
    const { call, callId } = await dialAgent(server, line.number, uniqueE164(), account);

    const firstReplyFrame = call.waitForMessage((message) => message.event === 'media', 30_000);
    const spoke = await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    await firstReplyFrame;
    // Hang up only once the whole reply was synthesised and reached the caller, so every synthesis
    // completed (a cancelled one is billed differently) and every meter is final.
    const replyText = REPLY_PIECES.join('');
    const heardAll = await eventually(
      async () => ({
        syntheses: synthesized.slice(ttsBefore),
        bytes: call.result().latency.bytesReceived,
        played: call.result().marksEchoed.filter((mark) => mark.reason === 'played').length,
      }),
      ({ syntheses, bytes, played }) =>
        // The caller played (and echoed the mark after) at least the first piece: some audio is "heard".
        played >= 1 &&
        syntheses.map((synthesis) => synthesis.input).join(' ') === replyText &&
        // 8 kHz mu-law: one byte per 3 samples at 24 kHz; a frame of slack for resampler edges.
        bytes >= sumOf(syntheses.map((synthesis) => Math.floor(synthesis.samples / 3))) - 160,
      30_000,
    );
    expect(heardAll.syntheses.map((synthesis) => synthesis.input).join(' ')).toBe(replyText);
    // The reply's audio is paced to real time: its last frame (and the mark after it) may still be
    // on the way; the caller stays on until it has played the reply to its end.
    expect((await call.waitForReplyEnd(spoke.audibleEndedAtMs ?? 0, { tailMs: 100, timeoutMs: 20_000 })).outcome).toBe('ended');
    await call.hangup();
    const streamWindowMs = performance.now() - dialledAt;
    const callerBytesSent = call.result().latency.bytesSent;

    const cost = await pricedCost(callId);
    expect(cost.status).toBe('priced');
    const detail = (await api(`/v1/calls/${callId}`)).body;
    // The caller's `stop` ended it (not Twilio's status callback, which has not come yet).
    expect(detail.endReason).toBe('stream_stopped');

    // Telephony: started minutes between the call's start and end as the call detail shows them.
    const connectedMs = Date.parse(detail.endedAt) - Date.parse(detail.startedAt);
    const telephonyMinutes = startedUnits(connectedMs, 60_000);
    // The stream lasted at most from the dial to the hang-up; well under a minute, so one started minute.
    expect(streamWindowMs).toBeLessThan(55_000);
    const streamMinutes = 1;
    // Speech recognition: the audio of the WAV files the fake transcription endpoint received.
    const sttRequests = openai.requestsTo('transcriptions').slice(sttBefore);
    expect(sttRequests.length).toBeGreaterThanOrEqual(1);
    const sttMs = millisecondsOfSamples(sumOf(sttRequests.map(wavSamples)), STT_SAMPLE_RATE);
    // Speech synthesis: the texts the fake TTS received and the PCM it returned.
    const syntheses = synthesized.slice(ttsBefore);
    const ttsCharacters = sumOf(syntheses.map((synthesis) => synthesis.input.length));
    const ttsMs = millisecondsOfSamples(sumOf(syntheses.map((synthesis) => synthesis.samples)), TTS_SAMPLE_RATE);
    // LLM: every chat request asked for the usage chunk, and each was answered with CHAT_USAGE.
    const chatRequests = openai.requestsTo('chat').slice(chatBefore);
    expect(chatRequests.length).toBeGreaterThanOrEqual(1);
    for (const request of chatRequests) expect((request.json as { stream_options?: unknown }).stream_options).toEqual({ include_usage: true });
    const replies = chatRequests.length;
    const cachedTokens = replies * CHAT_USAGE.cachedTokens;
    const uncachedTokens = replies * (CHAT_USAGE.promptTokens - CHAT_USAGE.cachedTokens);
    const outputTokens = replies * CHAT_USAGE.completionTokens;
    // Inference time is measured inside the server (nothing outside can observe it): Silero VAD ran on
    // the CPU for this call, so it must have been attributed some; the test prices it itself.
    const { cpuMicroseconds, gpuMicroseconds } = cost.meters;
    expect(cpuMicroseconds).toBeGreaterThan(0);

    const expected: ExpectedCostLine[] = [
      expectedLine('telephony', telephonyMinutes, PRICES.telephonyInboundPerMinute, PER_MINUTE),
      expectedLine('media_streams', streamMinutes, PRICES.mediaStreamsPerMinute, PER_MINUTE),
      expectedLine('stt', sttMs, PRICES.sttPerAudioMinute, PER_AUDIO_MINUTE),
      expectedLine('tts_characters', ttsCharacters, PRICES.ttsPerMillionCharacters, PER_MILLION_CHARACTERS),
      expectedLine('tts_audio', ttsMs, PRICES.ttsPerAudioMinute, PER_AUDIO_MINUTE),
      expectedLine('llm_input', uncachedTokens, PRICES.llmInputPerMillionTokens, PER_MILLION_TOKENS),
      expectedLine('llm_cached_input', cachedTokens, PRICES.llmCachedInputPerMillionTokens, PER_MILLION_TOKENS),
      expectedLine('llm_output', outputTokens, PRICES.llmOutputPerMillionTokens, PER_MILLION_TOKENS),
      // No GPU on a CPU-only machine: a component with nothing measured has no line.
      ...(gpuMicroseconds > 0 ? [expectedLine('gpu', gpuMicroseconds, PRICES.gpuPerSecond, PER_SECOND_OF_MICROSECONDS)] : []),
      expectedLine('cpu', cpuMicroseconds, PRICES.cpuPerSecond, PER_SECOND_OF_MICROSECONDS),
      expectedLine('platform_fee', telephonyMinutes, PRICES.platformFeePerMinute, PER_MINUTE),
    ];
    const expectedTotal = sumOf(expected.map((expectedCostLine) => expectedCostLine.amountMicros));

    expect(cost.lines.map(pricedFields)).toEqual(expected);
    for (const ledgerLine of cost.lines) {
      expect(ledgerLine).toMatchObject({ kind: 'charge', reason: null, amount: decimalOf(ledgerLine.amountMicros) });
    }
    expect(cost).toMatchObject({
      callId,
      currency: 'USD',
      catalog: { id: catalog.id, version: catalog.version },
      totalMicros: expectedTotal,
      total: decimalOf(expectedTotal),
      correctedAt: null,
      repriced: { totalMicros: expectedTotal, matchesLedger: true },
      // The organization set no prices of its own: nothing to show beside what it is billed.
      ownPricing: null,
    });
    // The meters say the same as the caller: its audio, and the connected seconds of the call.
    expect(cost.meters).toMatchObject({
      direction: 'inbound',
      engine: 'pipeline',
      callerAudioMs: callerBytesSent / 8,
      agentAudioSentMs: call.result().latency.bytesReceived / 8,
      measuredConnectedSeconds: Math.ceil(connectedMs / 1000),
      twilioBilledMinutes: null,
    });
    // Heard = confirmed by the marks the caller echoed after playing the audio before them.
    expect(cost.meters.agentAudioHeardMs).toBeGreaterThan(0);
    expect(cost.meters.agentAudioHeardMs).toBeLessThanOrEqual(cost.meters.agentAudioSentMs);
    expect(detail.cost).toEqual(cost);

    pricedCallIds.push(callId);
    mainCall = { id: callId, callSid: call.parties.callSid, measuredSeconds: cost.meters.measuredConnectedSeconds, chargeLines: cost.lines, totalMicros: expectedTotal };
  }, 90_000);

  it("corrects the telephony minutes when Twilio's billed Duration arrives, appending lines and emitting call.cost", async () => {
    const priced = mainCall!;
    const billedMinutes = startedUnits(priced.measuredSeconds, 60) + 1;
    const callback = {
      AccountSid: account.accountSid,
      CallSid: priced.callSid,
      CallStatus: 'completed',
      CallDuration: String(priced.measuredSeconds),
      Duration: String(billedMinutes),
      SequenceNumber: '4',
    };
    expect((await postSignedTwilioForm(server, '/twilio/status', callback, account)).status).toBe(204);

    const corrected = await eventually(() => costOf(priced.id), (cost) => cost.lines.length > priced.chargeLines.length, 15_000);
    // The charge is untouched; one more billed minute adds its telephony price and its platform fee.
    expect(corrected.lines.slice(0, priced.chargeLines.length)).toEqual(priced.chargeLines);
    const corrections = corrected.lines.slice(priced.chargeLines.length);
    expect(corrections.map(pricedFields)).toEqual([
      expectedLine('telephony', 1, PRICES.telephonyInboundPerMinute, PER_MINUTE),
      expectedLine('platform_fee', 1, PRICES.platformFeePerMinute, PER_MINUTE),
    ]);
    for (const correction of corrections) expect(correction).toMatchObject({ kind: 'correction', reason: 'twilio_billed_duration' });
    const correctedTotal = priced.totalMicros + PRICES.telephonyInboundPerMinute + PRICES.platformFeePerMinute;
    expect(corrected).toMatchObject({
      totalMicros: correctedTotal,
      total: decimalOf(correctedTotal),
      correctedAt: expect.any(String),
      meters: { twilioBilledMinutes: billedMinutes },
      repriced: { totalMicros: correctedTotal, matchesLedger: true },
    });

    // Twilio retries a callback it got no 2xx for: the same news again changes nothing.
    expect((await postSignedTwilioForm(server, '/twilio/status', { ...callback, SequenceNumber: '5' }, account)).status).toBe(204);
    expect((await costOf(priced.id)).lines).toHaveLength(corrected.lines.length);

    // One call.cost event for the charge and one for the correction, each with the lines it added.
    const events = (await deliveryPayloads('call.cost')).filter((payload) => payload.data.callId === priced.id);
    expect(events.map((event) => [event.type, event.data.kind, event.data.totalMicros])).toEqual([
      ['call.cost', 'charge', priced.totalMicros],
      ['call.cost', 'correction', correctedTotal],
    ]);
    const [charge, correction] = events;
    expect(charge.data).toMatchObject({ agentId: line.agentId, currency: 'USD', catalog: { id: catalog.id, version: catalog.version }, total: decimalOf(priced.totalMicros) });
    expect(charge.data.lines.map(pricedFields)).toEqual((priced.chargeLines as ExpectedCostLine[]).map(pricedFields));
    expect(correction.data.lines.map(pricedFields)).toEqual(corrections.map(pricedFields));
  }, 60_000);

  it('shows a live call as pending, and prices it once it ends', async () => {
    const { call, callId } = await dialAgent(server, line.number, uniqueE164(), account);
    const live = await api(`/v1/calls/${callId}/cost`);
    expect(live.status).toBe(200);
    expect(live.body).toEqual({
      callId,
      status: 'pending',
      currency: null,
      catalog: null,
      totalMicros: null,
      total: null,
      pricedAt: null,
      correctedAt: null,
      meters: null,
      lines: [],
      repriced: null,
      ownPricing: null,
    });
    expect((await api(`/v1/calls/${callId}`)).body.cost).toEqual(live.body);

    await call.hangup();
    const priced = await pricedCost(callId);
    expect(priced).toMatchObject({ status: 'priced', repriced: { matchesLedger: true } });
    expect(priced.lines.map((ledgerLine: { component: string }) => ledgerLine.component)).toEqual(expect.arrayContaining(['telephony', 'media_streams', 'platform_fee']));
    pricedCallIds.push(callId);
  }, 60_000);

  describe('usage report', () => {
    const window = () => `from=${encodeURIComponent(fileStartedAt.toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`;
    const usage = (groupBy: string, apiKey = orgKey) => server.api(`/v1/usage?${window()}&groupBy=${groupBy}`, { apiKey });
    const usageCsv = async (query: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.serverUrl}/v1/usage?${window()}&${query}`, { headers: { authorization: `Bearer ${orgKey}`, ...headers } });
      return { status: response.status, contentType: response.headers.get('content-type'), disposition: response.headers.get('content-disposition'), text: await response.text() };
    };
    /** The report's rows as CSV cells (the API's JSON, written the way the CSV must say it). */
    const asCsvCells = (rows: any[]) =>
      rows.map((row) => [row.group ?? '', row.label ?? '', row.currency, String(row.calls), row.quantity === null ? '' : String(row.quantity), row.unit ?? '', String(row.amountMicros), row.amount]);

    let costs: any[];
    beforeAll(async () => {
      costs = await Promise.all(pricedCallIds.map(costOf));
    });

    it('groups by component: each row is the net of that component over the calls, and the rows add up to the total', async () => {
      expect(costs).toHaveLength(2);
      const report = await usage('component');
      expect(report.status).toBe(200);
      const expected = new Map<string, { calls: Set<string>; quantity: number; amountMicros: number; unit: string }>();
      for (const cost of costs) {
        for (const ledgerLine of cost.lines) {
          const row = expected.get(ledgerLine.component) ?? { calls: new Set<string>(), quantity: 0, amountMicros: 0, unit: ledgerLine.unit };
          row.calls.add(cost.callId);
          row.quantity += ledgerLine.quantity;
          row.amountMicros += ledgerLine.amountMicros;
          expected.set(ledgerLine.component, row);
        }
      }
      const byGroup = (a: { group: string }, b: { group: string }) => a.group.localeCompare(b.group);
      expect([...report.body.data].sort(byGroup)).toEqual(
        [...expected.entries()]
          .map(([component, row]) => ({
            group: component,
            label: null,
            currency: 'USD',
            calls: row.calls.size,
            quantity: row.quantity,
            unit: row.unit,
            amountMicros: row.amountMicros,
            amount: decimalOf(row.amountMicros),
          }))
          .sort(byGroup),
      );
      const total = sumOf(costs.map((cost) => cost.totalMicros));
      expect(sumOf(report.body.data.map((row: { amountMicros: number }) => row.amountMicros))).toBe(total);
      expect(report.body.totals).toEqual([{ currency: 'USD', calls: costs.length, amountMicros: total, amount: decimalOf(total) }]);
    });

    it('groups by agent and by day (UTC) with the same total', async () => {
      const total = sumOf(costs.map((cost) => cost.totalMicros));
      const agentName = (await api(`/v1/agents/${line.agentId}`)).body.name;
      const byAgent = await usage('agent');
      expect(byAgent.status).toBe(200);
      expect(byAgent.body.data).toEqual([
        { group: line.agentId, label: agentName, currency: 'USD', calls: costs.length, quantity: null, unit: null, amountMicros: total, amount: decimalOf(total) },
      ]);

      const days = new Map<string, { calls: number; amountMicros: number }>();
      for (const cost of costs) {
        const day = (await api(`/v1/calls/${cost.callId}`)).body.startedAt.slice(0, 10);
        const row = days.get(day) ?? { calls: 0, amountMicros: 0 };
        days.set(day, { calls: row.calls + 1, amountMicros: row.amountMicros + cost.totalMicros });
      }
      const byDay = await usage('day');
      expect(byDay.status).toBe(200);
      expect(byDay.body.data).toEqual(
        [...days.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([day, row]) => ({ group: day, label: null, currency: 'USD', calls: row.calls, quantity: null, unit: null, amountMicros: row.amountMicros, amount: decimalOf(row.amountMicros) })),
      );
      expect(byDay.body.totals).toEqual(byAgent.body.totals);
    });

    it('answers CSV (format=csv or Accept: text/csv) with the same numbers as JSON', async () => {
      const header = 'group,label,currency,calls,quantity,unit,amount_micros,amount';
      for (const [groupBy, csv] of [
        ['component', await usageCsv('groupBy=component&format=csv')],
        ['agent', await usageCsv('groupBy=agent', { accept: 'text/csv' })],
      ] as const) {
        expect(csv.status).toBe(200);
        expect(csv.contentType).toMatch(/^text\/csv/);
        expect(csv.disposition).toMatch(new RegExp(`^attachment; filename="usage-${groupBy}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`));
        const [first, ...rows] = csv.text.trim().split(/\r?\n/);
        expect(first).toBe(header);
        // No cell here needs quoting (uuids, component names, a plain agent name, numbers).
        expect(csv.text).not.toContain('"');
        const json = await usage(groupBy);
        expect(rows.map((row) => row.split(','))).toEqual(asCsvCells(json.body.data));
      }
    });

    it('answers 400 validation_failed to an unknown grouping or an empty window', async () => {
      const at = new Date().toISOString();
      for (const query of ['groupBy=nope', `from=${encodeURIComponent(at)}&to=${encodeURIComponent(at)}`, `from=${encodeURIComponent(at)}&to=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`]) {
        const answer = await api(`/v1/usage?${query}`);
        expect({ query, status: answer.status, code: answer.body.code }).toEqual({ query, status: 400, code: 'validation_failed' });
      }
    });

    it('lets a read key read costs and usage, and shows another organization none of them', async () => {
      const readKey = (await api('/v1/api-keys', { method: 'POST', body: { name: 'cost viewer', scopes: ['read'] } })).body.key;
      const asReader = await usage('component', readKey);
      expect(asReader.status).toBe(200);
      expect(asReader.body.totals).toEqual((await usage('component')).body.totals);
      expect((await server.api(`/v1/calls/${mainCall!.id}/cost`, { apiKey: readKey })).status).toBe(200);
      const changePrices = await server.api('/v1/price-catalog', { apiKey: readKey, method: 'POST', body: { prices: PRICES } });
      expect(changePrices.status).toBe(403);
      // The prices the organization is billed with are the operator's: not even its admin key sets them.
      const billingPrices = await server.api(`/v1/organizations/${organizationId}/price-catalog`, { apiKey: orgKey, method: 'POST', body: { prices: PRICES } });
      expect(billingPrices.status).toBe(401);

      // The default organization's admin key, and a brand-new organization's.
      const elsewhere = await server.api(`/v1/calls/${mainCall!.id}/cost`);
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.body.code).toBe('call_not_found');
      const strangerKey = await createOtherOrganizationKey(repositories, 'call-cost-stranger');
      expect((await server.api(`/v1/calls/${mainCall!.id}/cost`, { apiKey: strangerKey })).status).toBe(404);
      const strangerUsage = await usage('component', strangerKey);
      expect(strangerUsage.status).toBe(200);
      expect(strangerUsage.body).toMatchObject({ data: [], totals: [] });
    });
  });

  describe('monthly budget', () => {
    it('with a hard limit, refuses new calls once the month is spent (inbound politely, outbound 402), and announces the threshold', async () => {
      const costs = await Promise.all(pricedCallIds.map(costOf));
      const before = (await api('/v1/organization')).body.budget;
      expect(before).toMatchObject({ monthlyBudgetMicros: null, monthlyBudget: null, hardLimit: false, currency: 'USD', month: currentMonth() });
      expect(before.spentMicros).toBe(sumOf(costs.map((cost) => cost.totalMicros)));

      const budgetMicros = before.spentMicros - 1;
      const patched = await api('/v1/organization', { method: 'PATCH', body: { monthlyBudgetMicros: budgetMicros, budgetHardLimit: true } });
      expect(patched.status).toBe(200);
      expect(patched.body.budget).toEqual({ ...before, monthlyBudgetMicros: budgetMicros, monthlyBudget: decimalOf(budgetMicros), hardLimit: true });
      const status = (await api('/v1/organization')).body.budget;
      expect(status.spentMicros).toBeGreaterThanOrEqual(status.monthlyBudgetMicros);

      // A budget set below what the month already spent announces both thresholds at once.
      const thresholds = await eventually(() => deliveryPayloads('usage.threshold'), (payloads) => payloads.length >= 2, 10_000);
      const month = currentMonth();
      expect(thresholds.map((payload) => payload.data).sort((a, b) => a.thresholdPercent - b.thresholdPercent)).toEqual([80, 100].map((thresholdPercent) => ({
        month,
        thresholdPercent,
        currency: 'USD',
        budgetMicros,
        budget: decimalOf(budgetMicros),
        spentMicros: before.spentMicros,
        spent: decimalOf(before.spentMicros),
        hardLimit: true,
        newCallsRefused: thresholdPercent >= 100,
      })));
      expect(thresholds.every((payload) => payload.type === 'usage.threshold')).toBe(true);

      // Inbound: a polite message and a hang-up, no stream.
      const refused = callIn();
      const twiml = await refused.dial();
      expect(twiml.rejected).toBe(true);
      expect(twiml.stream).toBeNull();
      expect(twiml.sayText).toBe(LINE_UNAVAILABLE_MESSAGE);
      expect(twiml.verbs.map((verb) => verb.name)).toEqual(['Say', 'Hangup']);
      const listed = (await api('/v1/calls?limit=100')).body.data.find((call: { twilioCallSid: string }) => call.twilioCallSid === refused.parties.callSid);
      expect(listed).toMatchObject({ direction: 'inbound', agentId: line.agentId, endReason: 'budget_exceeded', endedAt: expect.any(String) });

      // Outbound: refused before Twilio is asked.
      const outbound = await callOut();
      expect(outbound.status).toBe(402);
      expect(outbound.body).toMatchObject({ code: 'budget_exceeded', budgetMicros, spentMicros: before.spentMicros, currency: 'USD' });
      expect(twilioRest.requestsFor('create_call').filter((request) => request.form['From'] === line.number)).toHaveLength(0);

      // Twilio reports the refused call complete: it billed the minute of the message, which is priced
      // (no stream, so nothing else).
      const completed = await postSignedTwilioForm(
        server,
        '/twilio/status',
        {
          AccountSid: account.accountSid,
          CallSid: refused.parties.callSid,
          CallStatus: 'completed',
          CallDuration: '6',
          Duration: '1',
          SequenceNumber: '2',
        },
        account,
      );
      expect(completed.status).toBe(204);
      const refusedCost = await pricedCost(listed.id);
      // Twilio bills the refusal's minute; the platform charges no fee for a call no agent served.
      expect(refusedCost.lines.map(pricedFields)).toEqual([expectedLine('telephony', 1, PRICES.telephonyInboundPerMinute, PER_MINUTE)]);
      pricedCallIds.push(listed.id);


      // Each threshold is announced once a month: later ledger writes (the refused call's charge and its correction) announce nothing new.
      const recorrected = await postSignedTwilioForm(
        server,
        '/twilio/status',
        {
          AccountSid: account.accountSid,
          CallSid: refused.parties.callSid,
          CallStatus: 'completed',
          CallDuration: '66',
          Duration: '2',
          SequenceNumber: '3',
        },
        account,
      );
      expect(recorrected.status).toBe(204);
      await eventually(() => costOf(listed.id), (cost) => cost.lines.length === 2, 10_000);
      expect((await deliveryPayloads('usage.threshold')).length).toBe(2);
    }, 60_000);

    it('admits calls again once the hard limit is lifted', async () => {
      expect((await callOut()).status).toBe(402);
      const lifted = await api('/v1/organization', { method: 'PATCH', body: { budgetHardLimit: false } });
      expect(lifted.status).toBe(200);
      expect(lifted.body.budget.hardLimit).toBe(false);
      expect(lifted.body.budget.spentMicros).toBeGreaterThanOrEqual(lifted.body.budget.monthlyBudgetMicros);

      const admitted = await callIn().dial();
      expect(admitted.rejected).toBe(false);
      const inboundId = admitted.stream!.parameters['callId']!;
      const outbound = await callOut();
      expect(outbound.status).toBe(201);
      for (const callId of [inboundId, outbound.body.id]) expect((await api(`/v1/calls/${callId}/hangup`, { method: 'POST' })).status).toBe(200);
    }, 30_000);
  });
});
