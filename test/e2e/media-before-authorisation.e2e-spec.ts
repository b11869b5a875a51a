import { Client } from 'pg';
import { decodeMulaw, encodeMulaw, snrDb, StreamingResampler } from '@switchboard/audio';
import { ECHO_SAMPLE_RATE } from '@switchboard/conversation';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { testDatabaseUrl, uniqueCallSid } from '../support/database';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

const SAMPLE_RATE = 8000;
const FRAME = 160;
/** How long the stream token's claim is held up: its UPDATE waits for a row lock another session holds. */
const CLAIM_DELAY_MS = 2000;
const CHIRP_MS = 3000;
const TRAILING_SILENCE_MS = 1000;

/** A chirp sweeping 300 Hz -> 3 kHz: every 20 ms frame differs from every other, so a lost, repeated or shifted frame shows. */
function chirp(ms: number): Int16Array {
  const length = (ms * SAMPLE_RATE) / 1000;
  const sweepHzPerS = 2700 / (ms / 1000);
  return Int16Array.from({ length }, (_, i) => {
    const t = i / SAMPLE_RATE;
    return Math.round(10_000 * Math.sin(2 * Math.PI * (300 * t + (sweepHzPerS * t * t) / 2)));
  });
}

/**
 * The echo agent's chain delays audio by the group delay of its two resamplers (8k -> 16k, then
 * 16k -> 8k), in 8 kHz samples: received[i + delay] ~ sent[i]. A constant delay is all the chain may
 * add; any inserted, lost or repeated sample anywhere shifts or breaks the rest.
 */
function echoChainDelaySamples(): number {
  const up = new StreamingResampler({ inputRate: SAMPLE_RATE, outputRate: ECHO_SAMPLE_RATE });
  const down = new StreamingResampler({ inputRate: ECHO_SAMPLE_RATE, outputRate: SAMPLE_RATE });
  return (up.delayOutputSamples * SAMPLE_RATE) / ECHO_SAMPLE_RATE + down.delayOutputSamples;
}

/**
 * Audio a caller sends while its stream token is still being claimed is held and played through,
 * in order, once the call is known: nothing is dropped, duplicated or reordered. The claim is made
 * slow for real: another database session holds the call's row lock, so the claim's UPDATE waits.
 */
describe('media that arrives before the stream is authorised (e2e)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it(`echoes every frame sent while the claim waited ${CLAIM_DELAY_MS} ms, in order, with nothing inserted`, async () => {
    const call = new SimulatedTwilioCall({
      serverUrl: server.serverUrl,
      publicBaseUrl: server.publicBaseUrl,
      authToken: server.authToken,
      accountSid: server.accountSid,
      from: '+15550004444',
      to: server.echoNumber,
      callSid: uniqueCallSid(),
      // Only the chirp and its trailing silence go down the line, so the line's audio is known exactly.
      idleSilence: false,
    });
    const callId = (await call.dial()).stream!.parameters['callId']!;

    const locker = new Client({ connectionString: testDatabaseUrl() });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM calls WHERE id = $1 FOR UPDATE', [callId]);
    let released: Promise<unknown> = Promise.resolve();
    try {
      const mulaw = encodeMulaw(chirp(CHIRP_MS));
      await call.connectMedia();
      const release = setTimeout(() => (released = locker.query('COMMIT')), CLAIM_DELAY_MS);
      try {
        // Silence after the chirp lets its echo (held back by the claim) arrive before the hang-up.
        await call.streamAudio(mulaw, { trailingSilenceMs: TRAILING_SILENCE_MS });
      } finally {
        clearTimeout(release);
        await released;
      }
      // The echo of the held audio is paced to real time (OUTBOUND_AUDIO_LEAD_MS ahead at most), as
      // Twilio would have played it anyway: it trails the line by about the hold, so the caller
      // waits (bounded) for every frame to come back before its stop.
      await call.hangup({ awaitEchoMs: CLAIM_DELAY_MS + 5_000 });
    } finally {
      await locker.end();
    }

    const result = call.result();
    expect(result.protocolErrors).toEqual([]);
    // The claim really was late: nothing could come back before it.
    expect(result.latency.firstEchoMs).toBeGreaterThanOrEqual(CLAIM_DELAY_MS - 100);

    // What went down the line (the chirp after mu-law, then silence) against what came back.
    const reference = decodeMulaw(encodeMulaw(chirp(CHIRP_MS)));
    const lineSamples = result.latency.bytesSent;
    expect(lineSamples).toBe(reference.length + (TRAILING_SILENCE_MS * SAMPLE_RATE) / 1000);
    const delay = echoChainDelaySamples();
    // The echo returns one frame per frame (the chain's first `delay` samples are its filters
    // filling, the line's last `delay` samples are still in them at the end). All that may be
    // missing is the echo of the caller's last frame, which crosses its hang-up (a caller takes
    // nothing after stop); the trailing silence makes that silence, so all of the chirp is back.
    // No padding anywhere: the echo is one utterance, never ended while the stream runs.
    expect(result.received.length).toBeLessThanOrEqual(lineSamples);
    expect(result.received.length).toBeGreaterThanOrEqual(lineSamples - FRAME);
    expect(result.received.length - delay).toBeGreaterThanOrEqual(reference.length);
    expect(result.latency.bytesReceived % FRAME).toBe(0);

    // Frame by frame, at the chain's constant delay, every 20 ms of the chirp came back (the chain
    // alone measures 50 dB in floating point; mu-law both ways leaves > 30 dB).
    const frameSnrs: number[] = [];
    for (let start = 0; start + FRAME <= reference.length; start += FRAME) {
      frameSnrs.push(snrDb(reference.subarray(start, start + FRAME), result.received.subarray(start + delay, start + delay + FRAME)));
    }
    const worst = Math.min(...frameSnrs);
    process.stdout.write(`held-then-echoed chirp: ${frameSnrs.length} frames, worst frame SNR ${worst.toFixed(1)} dB at delay ${delay} samples\n`);
    expect(frameSnrs).toHaveLength(CHIRP_MS / 20);
    expect(worst).toBeGreaterThanOrEqual(25);

    // The call record says nothing was lost either: the server echoed one frame for every frame in
    // (the last one too, which the caller no longer took).
    const detail = await eventually(
      () => server.api(`/v1/calls/${callId}`),
      (response) => response.body?.events?.some((event: { type: string }) => event.type === 'stream_closed'),
    );
    const closed = detail.body.events.find((event: { type: string }) => event.type === 'stream_closed').payload;
    expect(closed.mediaFramesIn).toBe(lineSamples / FRAME);
    expect(closed.mediaFramesOut).toBe(closed.mediaFramesIn);
    const types: string[] = detail.body.events.map((event: { type: string }) => event.type);
    expect(types).not.toContain('protocol_error');
    expect(types).not.toContain('error');
  }, 30_000);
});
