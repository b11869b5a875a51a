import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallRecordingRepository } from '@switchboard/persistence';
import { Client } from 'pg';
import { decodeMulaw, readWav, wavHeader } from '@switchboard/audio';
import { type FakeChatReply, FakeOpenAiServer, type RecordedRequest } from '@switchboard/testing';
import { RecordingRetentionSweeper } from '../../apps/server/src/recordings/recording-retention.sweeper';
import { bindAgent, dialAgent, fakePipelineEngines, lastUserMessage, speechFixture, toneSpeechFor } from '../support/conversation-agents';
import { testDatabaseUrl } from '../support/database';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebCallClient } from '../support/web-call-client';
import { LOCAL_S3_CREDENTIALS, startLocalS3Server, type LocalS3Server } from '../support/s3-server';

/**
 * Call recordings end to end: a simulated Twilio caller talks to a pipeline agent over real
 * sockets, barges in on its long answer, hangs up, and the recording is read back through the API
 * the way a user would (GET with and without Range, a signed link, DELETE, retention). The caller's
 * channel must be exactly what the caller sent; the agent's channel exactly what the caller heard.
 */

const API_KEY_SECRET = 'call-recordings-openai-key';
const OPERATOR_KEY = 'sk_operator_call_recordings_e2e_000000';
const FAKE_API_KEY = 'sk-fake-recordings';
/**
 * The server places the agent's audio when it sends it; the caller hears it when it arrives. The
 * difference is the audio's way to the caller (here an event loop shared with the server: 15-18 ms
 * measured), so a barge-in's cut and the reply's onset match what the caller heard within 3 frames.
 */
const TRANSIT_TOLERANCE_SAMPLES = 3 * 160;
/** One 20 ms frame at 8 kHz. */
const FRAME_SAMPLES = 160;



/** The samples of channel `channel` of an interleaved stereo recording. */
function channelOf(samples: Int16Array, channel: 0 | 1): Int16Array {
  return samples.filter((_, index) => index % 2 === channel);
}

/** The agent's audio with the silence between its utterances taken out (a timeline's gaps depend on timing; its audio must not). */
function withoutSilence(samples: Int16Array): Int16Array {
  return samples.filter((sample) => sample !== 0);
}

function firstSound(samples: Int16Array): number {
  return samples.findIndex((sample) => sample !== 0);
}

function commonPrefixLength(a: Int16Array, b: Int16Array): number {
  const limit = Math.min(a.length, b.length);
  let index = 0;
  while (index < limit && a[index] === b[index]) index++;
  return index;
}

function sameSamples(a: Int16Array, b: Int16Array): boolean {
  return a.length === b.length && commonPrefixLength(a, b) === a.length;
}

async function download(server: TestServer, path: string, headers: Record<string, string> = {}, apiKey: string | null = server.adminApiKey) {
  const response = await fetch(`${server.serverUrl}${path}`, { headers: { ...headers, ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) } });
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

describe('call recordings (e2e)', () => {
  let server: TestServer;
  let openai: FakeOpenAiServer;
  let transcript = 'hello';
  let chat: (request: RecordedRequest) => FakeChatReply = () => ({ text: ['Hello.'] });

  const engines = () => fakePipelineEngines(openai.baseUrl, API_KEY_SECRET);

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: transcript }),
      chat: (request) => chat(request),
      speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)), chunkBytes: [1, 161, 1234, 4801] }),
    });
    server = await startTestServer({ OPERATOR_API_KEY: OPERATOR_KEY, RECORDINGS_RETENTION_SWEEP_INTERVAL_MS: '0' });
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await openai?.close();
  });

  const recordingReady = (callId: string) =>
    eventually(() => server.api(`/v1/calls/${callId}/recording/link`), (response) => response.status === 200, 15_000);

  describe('a phone call with a barge-in', () => {
    let callId: string;
    let sent: Int16Array;
    let played: Int16Array;
    let received: Int16Array;
    let wav: Uint8Array;

    beforeAll(async () => {
      const longAnswer = 'Our store opens at nine in the morning on weekdays. On weekends we open at ten and close at four. Holidays have their own hours posted online.';
      transcript = 'What are your opening hours?';
      chat = (request) => (lastUserMessage(request).startsWith('Wait') ? { text: ['Sure, go ahead.'] } : { text: [longAnswer] });
      const { number } = await bindAgent(server, {
        engine: 'pipeline',
        config: { ...engines(), interruptions: { enabled: true, minSpeechMs: 300 }, recording: { enabled: true, channels: 'dual' } },
      });
      const dialled = await dialAgent(server, number);
      const { call } = dialled;
      callId = dialled.callId;
      const firstReplyFrame = call.waitForMessage((message) => message.event === 'media', 20_000);
      await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
      await firstReplyFrame;
      // About 1.5 s of the answer plays (the agent sends faster than real time: count what played), then the caller talks over it.
      await eventually(async () => withoutSilence(call.result().played).length, (samples) => samples >= 12_000, 10_000);
      transcript = 'Wait, stop. I have a different question.';
      const cleared = call.waitForMessage((message) => message.event === 'clear', 10_000);
      await call.streamAudio(speechFixture('interrupt'), { trailingSilenceMs: 200 });
      await cleared;
      // The second answer plays to its end (its last mark echoed) before the caller hangs up.
      await eventually(
        async () => (await server.api(`/v1/calls/${callId}`)).body,
        (body) => body.transcript?.some((turn: { text: string }) => turn.text === 'Sure, go ahead.') && body.latency?.length >= 2,
        15_000,
      );
      // Every mark the server placed has come back (played or cleared): nothing is left in the caller's playback.
      await eventually(async () => call.result().latency, (latency) => latency.marksReceived === latency.marksEchoed + latency.marksCleared, 10_000);
      await call.hangup();
      const result = call.result();
      sent = decodeMulaw(result.sentMulaw);
      played = result.played;
      received = result.received;
      await recordingReady(callId);
      const whole = await download(server, `/v1/calls/${callId}/recording`);
      expect(whole.status).toBe(200);
      wav = whole.bytes;
    }, 90_000);

    it('is a dual-channel WAV of the whole call, served as audio/wav with its length', async () => {
      const response = await download(server, `/v1/calls/${callId}/recording`);
      expect(response.headers.get('content-type')).toBe('audio/wav');
      expect(response.headers.get('accept-ranges')).toBe('bytes');
      expect(Number(response.headers.get('content-length'))).toBe(wav.length);
      const audio = readWav(wav);
      expect(audio).toMatchObject({ sampleRate: 8000, channelCount: 2 });
      const link = await server.api(`/v1/calls/${callId}/recording/link`);
      expect(link.body.recording).toMatchObject({ callId, status: 'available', channels: 'dual', sampleRate: 8000, bytes: wav.length, contentType: 'audio/wav' });
      expect(link.body.recording.durationMs).toBe(Math.round((audio.samples.length / 2 / 8000) * 1000));
    });

    it("has the caller on the left: every sample the caller sent, in order, and nothing else", () => {
      const left = channelOf(readWav(wav).samples, 0);
      expect(sent.length).toBeGreaterThan(8000 * 4);
      expect(sameSamples(left.subarray(0, sent.length), sent)).toBe(true);
      expect(left.subarray(sent.length).every((sample) => sample === 0)).toBe(true);
    });

    it('has the agent on the right exactly as the caller heard it: the cut answer up to the barge-in, none of what was cleared, then the next answer', () => {
      const right = channelOf(readWav(wav).samples, 1);
      const heard = withoutSilence(played);
      const recorded = withoutSilence(right);
      const everythingSent = withoutSilence(received);
      // What the caller heard is what the server sent, less a cleared stretch in the middle.
      const heardPrefix = commonPrefixLength(heard, everythingSent);
      const clearedUpTo = everythingSent.length - (heard.length - heardPrefix);
      expect(heardPrefix).toBeGreaterThan(8000); // over a second of the first answer played
      // A stretch of it was cleared, unheard: what the caller's buffer held when the clear came (about
      // the pacing lead, OUTBOUND_AUDIO_LEAD_MS; test/e2e/paced-speech.e2e-spec.ts bounds it).
      expect(clearedUpTo - heardPrefix).toBeGreaterThan(FRAME_SAMPLES);
      expect(sameSamples(heard.subarray(heardPrefix), everythingSent.subarray(clearedUpTo))).toBe(true);

      // The recording: the same first part (cut where the caller's playback was cleared), nothing
      // of the cleared stretch, and the whole second answer.
      const secondAnswer = everythingSent.subarray(clearedUpTo);
      const recordedCut = recorded.length - secondAnswer.length;
      expect(sameSamples(recorded.subarray(recordedCut), secondAnswer)).toBe(true);
      expect(commonPrefixLength(recorded.subarray(0, recordedCut), everythingSent)).toBe(recordedCut);
      expect(Math.abs(recordedCut - heardPrefix)).toBeLessThanOrEqual(TRANSIT_TOLERANCE_SAMPLES);
    });

    it("places the agent's speech where the caller heard it relative to their own voice", () => {
      const right = channelOf(readWav(wav).samples, 1);
      // Both timelines are the caller's media clock: the answer starts at the same moment in each.
      expect(Math.abs(firstSound(right) - firstSound(played))).toBeLessThanOrEqual(TRANSIT_TOLERANCE_SAMPLES);
    });

    it('serves byte ranges: the header, a middle slice, the last bytes, and 416 past the end', async () => {
      const head = await download(server, `/v1/calls/${callId}/recording`, { range: 'bytes=0-43' });
      expect(head.status).toBe(206);
      expect(head.headers.get('content-range')).toBe(`bytes 0-43/${wav.length}`);
      expect(head.bytes).toEqual(wav.subarray(0, 44));
      const middle = await download(server, `/v1/calls/${callId}/recording`, { range: 'bytes=10000-19999' });
      expect(middle.status).toBe(206);
      expect(middle.headers.get('content-length')).toBe('10000');
      expect(middle.bytes).toEqual(wav.subarray(10000, 20000));
      const tail = await download(server, `/v1/calls/${callId}/recording`, { range: 'bytes=-100' });
      expect(tail.status).toBe(206);
      expect(tail.bytes).toEqual(wav.subarray(wav.length - 100));
      const past = await download(server, `/v1/calls/${callId}/recording`, { range: `bytes=${wav.length}-` });
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${wav.length}`);
    });

    it('makes short-lived signed links that work without a key, and refuses altered or foreign ones', async () => {
      const link = await server.api(`/v1/calls/${callId}/recording/link?expiresInS=60`);
      expect(link.status).toBe(200);
      const url = new URL(link.body.url);
      expect(url.origin).toBe(server.publicBaseUrl);
      const path = `${url.pathname}${url.search}`;
      const viaLink = await download(server, path, { range: 'bytes=0-999' }, null);
      expect(viaLink.status).toBe(206);
      expect(viaLink.bytes).toEqual(wav.subarray(0, 1000));
      const altered = path.replace(/signature=([0-9a-f])/, (_match, first: string) => `signature=${first === '0' ? '1' : '0'}`);
      expect((await download(server, altered, {}, null)).status).toBe(403);
      const otherCall = path.replace(callId, '00000000-0000-4000-8000-000000000000');
      expect((await download(server, otherCall, {}, null)).status).toBe(403);
      // The API itself still needs a key.
      expect((await download(server, `/v1/calls/${callId}/recording`, {}, null)).status).toBe(401);
    });

    it("is another organization's to neither read, link nor delete, and a read key's to read but not delete", async () => {
      const other = await server.api('/v1/organizations', { apiKey: OPERATOR_KEY, method: 'POST', body: { name: `recordings-other-${Date.now()}` } });
      expect(other.status).toBe(201);
      const otherKey = other.body.adminKey.key as string;
      expect((await download(server, `/v1/calls/${callId}/recording`, {}, otherKey)).status).toBe(404);
      expect((await server.api(`/v1/calls/${callId}/recording/link`, { apiKey: otherKey })).status).toBe(404);
      expect((await server.api(`/v1/calls/${callId}/recording`, { method: 'DELETE', apiKey: otherKey })).status).toBe(404);
      const readKey = await server.api('/v1/api-keys', { method: 'POST', body: { name: 'recordings reader', scopes: ['read'] } });
      expect((await download(server, `/v1/calls/${callId}/recording`, { range: 'bytes=0-1' }, readKey.body.key)).status).toBe(206);
      expect((await server.api(`/v1/calls/${callId}/recording`, { method: 'DELETE', apiKey: readKey.body.key })).status).toBe(403);
    });

    it('DELETE removes the file; the call then answers 410 with the deletion recorded', async () => {
      expect((await server.api(`/v1/calls/${callId}/recording`, { method: 'DELETE' })).status).toBe(204);
      const gone = await download(server, `/v1/calls/${callId}/recording`);
      expect(gone.status).toBe(410);
      expect(JSON.parse(Buffer.from(gone.bytes).toString('utf8'))).toMatchObject({ code: 'recording_deleted' });
      expect((await server.api(`/v1/calls/${callId}/recording`, { method: 'DELETE' })).status).toBe(410);
    });
  });

  it('a call whose agent does not record has no recording (404); a recording a stopped process left in its spool is stored by the next sweep', async () => {
    const { number } = await bindAgent(server, { engine: 'echo', config: {} });
    const { call, callId } = await dialAgent(server, number);
    await call.streamAudio(speechFixture('goodbye'), { trailingSilenceMs: 100 });
    await call.hangup();
    const ended = await eventually(() => server.api(`/v1/calls/${callId}`), (response) => response.body.endReason !== null, 10_000);
    const response = await server.api(`/v1/calls/${callId}/recording/link`);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('recording_not_found');

    // As a process that stopped mid-call leaves it: the row says 'recording', the spool file has
    // the audio written so far behind a header for 0 bytes, and half a sample frame at its end.
    await server.app.get(CallRecordingRepository).start({
      callId,
      organizationId: ended.body.organizationId,
      store: 'local',
      objectKey: `${ended.body.organizationId}/${callId}.wav`,
      contentType: 'audio/wav',
      channels: 'dual',
      sampleRate: 8000,
      startedOffsetMs: 0,
    });
    const written = Int16Array.from({ length: 2 * 8000 }, (_, index) => (index * 7) % 2000);
    const spoolPath = join(server.app.get<AppConfig>(APP_CONFIG).recordings.dir, '.spool', `${callId}.wav`);
    mkdirSync(dirname(spoolPath), { recursive: true });
    writeFileSync(spoolPath, Buffer.concat([Buffer.from(wavHeader({ sampleRate: 8000, channelCount: 2, dataBytes: 0 })), Buffer.from(written.buffer), Buffer.from([1, 2])]));
    expect((await server.api(`/v1/calls/${callId}/recording/link`)).body.code).toBe('recording_in_progress');
    await server.app.get(RecordingRetentionSweeper).sweep(new Date(Date.now() + 10 * 60_000));
    const recovered = await server.api(`/v1/calls/${callId}/recording/link`);
    expect(recovered.body.recording).toMatchObject({ status: 'available', durationMs: 1000, bytes: 44 + written.byteLength });
    const audio = readWav((await download(server, `/v1/calls/${callId}/recording`)).bytes);
    expect(sameSamples(audio.samples, written)).toBe(true);
  });

  it('records browser calls too: 16 kHz, the caller exactly as sent (mono mix on request)', async () => {
    const created = await server.api('/v1/agents', { method: 'POST', body: { name: 'recorded web echo', engine: 'echo', config: { recording: { enabled: true, channels: 'dual' } } } });
    expect(created.status).toBe(201);
    const minted = await server.api(`/v1/agents/${created.body.id}/web-calls`, { method: 'POST', body: {} });
    const { callId, token } = minted.body as { callId: string; token: string };
    const client = new WebCallClient(`${server.serverUrl.replace(/^http/, 'ws')}/v1/web-calls`);
    await client.opened;
    client.start(callId, token);
    const speech = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav')))).samples;
    await client.stream(speech, 400);
    client.sendJson({ type: 'hangup' });
    await client.closed;
    await recordingReady(callId);
    const audio = readWav((await download(server, `/v1/calls/${callId}/recording`)).bytes);
    expect(audio).toMatchObject({ sampleRate: 16_000, channelCount: 2 });
    const left = channelOf(audio.samples, 0);
    const sentSamples = new Int16Array(speech.length + 400 * 16);
    sentSamples.set(speech);
    expect(sameSamples(left.subarray(0, sentSamples.length), sentSamples)).toBe(true);
    // The echo came back on the right: the agent's channel carries sound.
    expect(channelOf(audio.samples, 1).some((sample) => sample !== 0)).toBe(true);
  }, 30_000);

  it('retention: recordings older than the organization keeps them are deleted by the sweep, newer ones stay', async () => {
    const { number } = await bindAgent(server, { engine: 'echo', config: { recording: { enabled: true, channels: 'mono' } } });
    const callIds: string[] = [];
    for (let index = 0; index < 2; index++) {
      const { call, callId } = await dialAgent(server, number);
      await call.streamAudio(speechFixture('goodbye'), { trailingSilenceMs: 100 });
      await call.hangup();
      await recordingReady(callId);
      callIds.push(callId);
    }
    const [oldCall, newCall] = callIds as [string, string];
    const mono = readWav((await download(server, `/v1/calls/${newCall}/recording`)).bytes);
    expect(mono.channelCount).toBe(1);
    expect((await server.api('/v1/organization', { method: 'PATCH', body: { recordingRetentionDays: 30 } })).body.recordingRetentionDays).toBe(30);
    const database = new Client({ connectionString: testDatabaseUrl() });
    await database.connect();
    try {
      await database.query("UPDATE call_recordings SET created_at = now() - interval '31 days' WHERE call_id = $1", [oldCall]);
      await server.app.get(RecordingRetentionSweeper).sweep();
      expect((await download(server, `/v1/calls/${oldCall}/recording`)).status).toBe(410);
      expect((await download(server, `/v1/calls/${newCall}/recording`)).status).toBe(200);
    } finally {
      await database.end();
      await server.api('/v1/organization', { method: 'PATCH', body: { recordingRetentionDays: null } });
    }
  }, 40_000);

  describe('stored in an S3-compatible store (s3rver, started here)', () => {
    let s3: LocalS3Server;
    let s3Server: TestServer;

    beforeAll(async () => {
      s3 = await startLocalS3Server('call-recordings');
      s3Server = await startTestServer({
        RECORDINGS_S3_BUCKET: s3.bucket,
        RECORDINGS_S3_ENDPOINT: s3.endpoint,
        RECORDINGS_S3_ACCESS_KEY_ID: LOCAL_S3_CREDENTIALS.accessKeyId,
        RECORDINGS_S3_SECRET_ACCESS_KEY: LOCAL_S3_CREDENTIALS.secretAccessKey,
        RECORDINGS_S3_FORCE_PATH_STYLE: 'true',
        RECORDINGS_S3_PREFIX: 'switchboard/',
        RECORDINGS_RETENTION_SWEEP_INTERVAL_MS: '0',
      });
    }, 30_000);

    afterAll(async () => {
      await s3Server?.close();
      await s3?.close();
    });

    it('uploads the finished recording under the organization and call, and serves it (and ranges of it) from there', async () => {
      const { number } = await bindAgent(s3Server, { engine: 'echo', config: { recording: { enabled: true, channels: 'dual' } } });
      const { call, callId } = await dialAgent(s3Server, number);
      await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
      await call.hangup();
      const sentAudio = decodeMulaw(call.result().sentMulaw);
      const link = await eventually(() => s3Server.api(`/v1/calls/${callId}/recording/link`), (response) => response.status === 200, 15_000);
      const organizationId = (await s3Server.api('/v1/organization')).body.id as string;
      expect(s3.notifications).toContain(`ObjectCreated:Put switchboard/${organizationId}/${callId}.wav`);
      const whole = await download(s3Server, `/v1/calls/${callId}/recording`);
      expect(whole.status).toBe(200);
      expect(whole.bytes.length).toBe(link.body.recording.bytes);
      const left = channelOf(readWav(whole.bytes).samples, 0);
      expect(sameSamples(left.subarray(0, sentAudio.length), sentAudio)).toBe(true);
      const part = await download(s3Server, `/v1/calls/${callId}/recording`, { range: 'bytes=100-4099' });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-4099/${whole.bytes.length}`);
      expect(part.bytes).toEqual(whole.bytes.subarray(100, 4100));
      expect((await s3Server.api(`/v1/calls/${callId}/recording`, { method: 'DELETE' })).status).toBe(204);
      expect((await download(s3Server, `/v1/calls/${callId}/recording`)).status).toBe(410);
    }, 30_000);
  });
});
