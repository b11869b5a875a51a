import { encodeMulaw } from '@switchboard/audio';
import { PlaybackTracker, TelephonyAudioOutput } from '@switchboard/conversation';
import { startedMediaStreamSession as started } from '@switchboard/testing';

/**
 * The outbound chain the server wires for every call (agent -> TelephonyAudioOutput ->
 * MediaStreamSession -> socket), fed the way agents feed it: audio in chunks of awkward sizes, a
 * PlaybackTracker placing progress marks between and inside them, and the end of each utterance.
 * The caller must receive exactly the audio produced, byte for byte, with silence added only to
 * complete the last frame of each utterance.
 */
const ODD_CHUNKS = [1, 161, 1234, 4801];
const FRAME = 160;

/** Every mu-law code, 0x7F ("negative zero") included, in an order that shows any shift or insertion. */
function modelBytes(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (seed * 101 + i * 13) & 0xff);
}

/** PCM whose mu-law encoding is deterministic (the reference is simply encodeMulaw of all of it). */
function agentPcm(length: number, seed: number): Int16Array {
  return Int16Array.from({ length }, (_, i) => Math.round(12_000 * Math.sin((i + seed) * 0.37) + 3000 * Math.sin((i * seed) % 97)));
}

function callEdge() {
  const context = started();
  const wire = () => Buffer.concat(context.sentAudio().map((frame) => Buffer.from(frame)));
  return { ...context, wire };
}

/** `total` split into the odd chunk sizes, in turn (the last chunk takes what is left). */
function chunkSizes(total: number): number[] {
  const sizes: number[] = [];
  for (let left = total, i = 0; left > 0; i += 1) {
    const size = Math.min(left, ODD_CHUNKS[i % ODD_CHUNKS.length]!);
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

const padFor = (bytes: number) => (FRAME - (bytes % FRAME)) % FRAME;

describe('outbound audio chain: agent chunks of any size reach the caller byte for byte', () => {
  it('mu-law agent: the model bytes pass through untouched (0x7F included), padded only at the end of each utterance', () => {
    const edge = callEdge();
    const output = new TelephonyAudioOutput(8000, edge.session, 'mulaw');
    const tracker = new PlaybackTracker(output, 8000, 'rt1');
    const utterances = [modelBytes(6197, 1), modelBytes(1234 + 161 + 1, 2)];
    for (const [index, audio] of utterances.entries()) {
      tracker.beginSegment(`utterance ${index}`);
      let offset = 0;
      for (const size of chunkSizes(audio.length)) {
        tracker.sendAudio(audio.subarray(offset, offset + size), (piece) => output.playMulaw(piece));
        offset += size;
      }
      tracker.endSegment();
      output.endOfUtterance();
    }

    const expected = Buffer.concat(utterances.flatMap((audio) => [Buffer.from(audio), Buffer.alloc(padFor(audio.length), 0xff)]));
    expect(edge.wire().equals(expected)).toBe(true);
    expect(edge.wire().includes(0x7f)).toBe(true);
    expect(edge.session.counters.paddingBytesOut).toBe(padFor(6197) + padFor(1396));
    // Every mark went out (none deferred past its utterance), after its audio.
    const marks = edge.sentMessages().filter((message) => message.event === 'mark').map((message) => message.mark?.name);
    expect(marks).toEqual(edge.session.outstandingMarks);
    // A progress mark every 250 ms (2000 bytes) and a final one per utterance: 3 + 1, then 0 + 1.
    expect(marks).toHaveLength(5);
    expect(edge.session.deferredMarks).toEqual([]);
  });

  it('8 kHz PCM agent: encoded once, no inserted samples, marks counted as heard at the exact byte they were placed', () => {
    const edge = callEdge();
    const output = new TelephonyAudioOutput(8000, edge.session);
    const placed: { name: string; at: number }[] = [];
    let sent = 0;
    const pcm = agentPcm(4801 + 1234 + 161 + 1 + 4801, 7);
    let offset = 0;
    // As the echo agent and the realtime agent do: a mark between chunks, wherever that falls.
    for (const [index, size] of chunkSizes(pcm.length).entries()) {
      output.play(pcm.subarray(offset, offset + size));
      offset += size;
      sent += size;
      output.mark(`m${index}`);
      placed.push({ name: `m${index}`, at: sent });
    }
    output.endOfUtterance();

    const expected = Buffer.concat([Buffer.from(encodeMulaw(pcm)), Buffer.alloc(padFor(pcm.length), 0xff)]);
    expect(edge.wire().equals(expected)).toBe(true);
    expect(edge.session.counters).toMatchObject({ paddingBytesOut: padFor(pcm.length), marksSent: placed.length });

    // Twilio echoes each mark once the audio before it has played: heard is the byte it was placed at.
    for (const mark of placed) {
      edge.session.receive(edge.twilio.mark(mark.name));
      expect(edge.session.counters.mediaBytesHeard).toBe(mark.at);
    }
  });
});
