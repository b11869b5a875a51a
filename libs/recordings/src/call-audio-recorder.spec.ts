import { CallAudioRecorder, type RecordingChannels } from './call-audio-recorder';

const RATE = 8000;
const FRAME = 160; // 20 ms at 8 kHz

/** A recorder on a hand-driven clock that keeps everything written, per channel. */
function harness(channels: RecordingChannels = 'dual', flushEveryMs = 1000) {
  let nowMs = 0;
  const written: number[] = [];
  let writes = 0;
  const recorder = new CallAudioRecorder({
    sampleRate: RATE,
    channels,
    originMs: 0,
    flushEveryMs,
    now: () => nowMs,
    write: (samples) => {
      writes += 1;
      written.push(...samples);
    },
  });
  return {
    recorder,
    setNow: (ms: number) => (nowMs = ms),
    get writes() {
      return writes;
    },
    left: () => written.filter((_, index) => index % 2 === 0),
    right: () => written.filter((_, index) => index % 2 === 1),
    mono: () => written,
  };
}

/** A 20 ms frame whose samples count up from `start` (every sample distinct, so misplacement shows). */
function frame(start: number, length = FRAME): Int16Array {
  return Int16Array.from({ length }, (_, index) => ((start + index) % 30000) + 1);
}

/** The caller speaks in real time: frame n arrives at (n+1) * 20 ms. */
function callerFrames(h: ReturnType<typeof harness>, from: number, to: number, onFrame?: (n: number) => void): Int16Array[] {
  const sent: Int16Array[] = [];
  for (let n = from; n < to; n++) {
    h.setNow((n + 1) * 20);
    const pcm = frame(n * FRAME);
    sent.push(pcm);
    h.recorder.callerAudio(pcm);
    onFrame?.(n);
  }
  return sent;
}

function concat(parts: Int16Array[]): number[] {
  return parts.flatMap((part) => Array.from(part));
}

describe('CallAudioRecorder', () => {
  it('puts every caller sample on the left, in order, and silence on the right when the agent is quiet', () => {
    const h = harness();
    const sent = callerFrames(h, 0, 150);
    h.recorder.finish();
    expect(h.left()).toEqual(concat(sent));
    expect(h.right().every((sample) => sample === 0)).toBe(true);
    // Written as the call ran, in blocks of about a second, not at the end.
    expect(h.writes).toBeGreaterThanOrEqual(3);
  });

  it('writes as the call goes: what is held stays under two flush intervals however long the call is', () => {
    const h = harness('dual', 200);
    callerFrames(h, 0, 3000, (n) => {
      const heardSoFar = (n + 1) * FRAME;
      expect(heardSoFar - h.recorder.samplesWritten).toBeLessThan((2 * 200 * RATE) / 1000);
    });
  });

  it('places agent audio where it started playing: when it was sent, or after the audio queued before it', () => {
    const h = harness();
    const reply = [frame(50_000), frame(50_160), frame(50_320)];
    callerFrames(h, 0, 10, (n) => {
      // At 100 ms the agent sends three frames at once (TTS runs ahead of real time) ...
      if (n === 4) for (const part of reply) h.recorder.agentAudioSent(part);
    });
    h.recorder.finish();
    const right = h.right();
    expect(right.slice(0, 800).every((sample) => sample === 0)).toBe(true);
    // ... and they play back to back from that moment on.
    expect(right.slice(800, 800 + 3 * FRAME)).toEqual(concat(reply));
    expect(right.slice(800 + 3 * FRAME).every((sample) => sample === 0)).toBe(true);
  });

  it('keeps nothing of what a barge-in cleared: the agent channel stops at the clear', () => {
    const h = harness();
    const longReply = Array.from({ length: 100 }, (_, index) => frame(100_000 + index * FRAME)); // 2 s queued at once
    callerFrames(h, 0, 80, (n) => {
      if (n === 9) for (const part of longReply) h.recorder.agentAudioSent(part); // sent at 200 ms
      if (n === 34) h.recorder.agentCleared(); // cleared at 700 ms: 500 ms of it played
    });
    h.recorder.finish();
    const right = h.right();
    const startSample = 200 * 8;
    const clearSample = 700 * 8;
    expect(right.slice(startSample, clearSample)).toEqual(concat(longReply).slice(0, clearSample - startSample));
    expect(right.slice(clearSample).every((sample) => sample === 0)).toBe(true);
    expect(h.left()).toHaveLength(80 * FRAME);
  });

  it('starts the next reply at the time it is sent, after a clear', () => {
    const h = harness();
    const first = Array.from({ length: 50 }, (_, index) => frame(200_000 + index * FRAME));
    const second = [frame(300_000)];
    callerFrames(h, 0, 60, (n) => {
      if (n === 0) for (const part of first) h.recorder.agentAudioSent(part); // at 20 ms
      if (n === 10) h.recorder.agentCleared(); // at 220 ms
      if (n === 20) h.recorder.agentAudioSent(second[0]!); // at 420 ms
    });
    h.recorder.finish();
    const right = h.right();
    expect(right.slice(160, 1760)).toEqual(concat(first).slice(0, 1600));
    expect(right.slice(1760, 3360).every((sample) => sample === 0)).toBe(true);
    expect(right.slice(3360, 3360 + FRAME)).toEqual(concat(second));
  });

  it('ends the agent channel at hang-up: audio still queued then was never played', () => {
    const h = harness();
    const reply = Array.from({ length: 100 }, (_, index) => frame(400_000 + index * FRAME));
    callerFrames(h, 0, 20, (n) => {
      if (n === 4) for (const part of reply) h.recorder.agentAudioSent(part); // at 100 ms
    });
    h.recorder.finish(); // at 400 ms
    const right = h.right();
    expect(right).toHaveLength(20 * FRAME);
    expect(right.slice(800)).toEqual(concat(reply).slice(0, 20 * FRAME - 800));
  });

  it('mixes both sides into one channel for mono, clipped to 16 bits', () => {
    const h = harness('mono');
    h.setNow(20);
    h.recorder.agentAudioSent(Int16Array.from({ length: FRAME }, () => 30000));
    h.setNow(20);
    h.recorder.callerAudio(Int16Array.from({ length: FRAME }, () => 10)); // frame 0 (0-20 ms)
    h.setNow(40);
    h.recorder.callerAudio(Int16Array.from({ length: FRAME }, () => 30000)); // frame 1: under the agent's audio
    h.setNow(60);
    h.recorder.finish();
    const mono = h.mono();
    expect(mono.slice(0, FRAME).every((sample) => sample === 10)).toBe(true);
    expect(mono.slice(FRAME, 2 * FRAME).every((sample) => sample === 32767)).toBe(true);
  });

  it('ignores audio after finish, and finishing twice writes nothing more', () => {
    const h = harness();
    callerFrames(h, 0, 5);
    h.recorder.finish();
    const length = h.left().length;
    h.recorder.callerAudio(frame(0));
    h.recorder.agentAudioSent(frame(0));
    h.recorder.finish();
    expect(h.left()).toHaveLength(length);
  });
});
