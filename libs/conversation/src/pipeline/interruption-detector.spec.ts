import type { VadFrame } from '@switchboard/inference';
import { InterruptionDetector } from './interruption-detector';

const CHUNK_MS = 32;
const SPEECH = 0.9;
const SILENCE = 0.05;
/** Between the negative threshold (0.35) and the threshold (0.5): continues whatever is going on. */
const WAVERING = 0.4;

/** A detector with the session's settings (threshold 0.5, hysteresis 0.15, 400 ms) and the interruptions it reported. */
function detector(): {
  detector: InterruptionDetector;
  fired: { startMs: number; detectedAtMs: number }[];
  backchannels: { startMs: number; endMs: number }[];
  feed: (...probabilities: number[]) => void;
} {
  const fired: { startMs: number; detectedAtMs: number }[] = [];
  const backchannels: { startMs: number; endMs: number }[] = [];
  const instance = new InterruptionDetector(
    { threshold: 0.5, negativeThreshold: 0.35, minSpeechMs: 400 },
    (speech) => fired.push(speech),
    (speech) => backchannels.push(speech),
  );
  let index = 0;
  const feed = (...probabilities: number[]): void => {
    const frames: VadFrame[] = probabilities.map((probability) => {
      const frame = { index, startMs: index * CHUNK_MS, endMs: (index + 1) * CHUNK_MS, probability, queueWaitMs: 0, runMs: 0 };
      index += 1;
      return frame;
    });
    for (const frame of frames) instance.onFrame(frame);
  };
  return { detector: instance, fired, backchannels, feed };
}

const repeat = (probability: number, count: number): number[] => Array.from({ length: count }, () => probability);

describe('InterruptionDetector', () => {
  it('fires once a run of speech has lasted minSpeechMs, with where the run began', () => {
    const { detector: instance, fired, feed } = detector();
    instance.setArmed(true);
    feed(...repeat(SILENCE, 3));
    // 12 chunks = 384 ms: not yet.
    feed(...repeat(SPEECH, 12));
    expect(fired).toEqual([]);
    // The 13th chunk ends 416 ms after the run began at 96 ms.
    feed(SPEECH);
    expect(fired).toEqual([{ startMs: 96, detectedAtMs: 96 + 13 * CHUNK_MS }]);
  });

  it('fires at most once per run of speech', () => {
    const { detector: instance, fired, feed } = detector();
    instance.setArmed(true);
    feed(...repeat(SPEECH, 40));
    expect(fired).toHaveLength(1);
  });

  it('ignores short blips (backchannels) and does not add them up across silence', () => {
    const { detector: instance, fired, feed } = detector();
    instance.setArmed(true);
    for (let i = 0; i < 5; i++) feed(...repeat(SPEECH, 10), ...repeat(SILENCE, 2));
    expect(fired).toEqual([]);
    expect(instance.inSpeech).toBe(false);
  });

  it('keeps a run going through wavering probabilities (hysteresis) and ends it below the negative threshold', () => {
    const { detector: instance, fired, feed } = detector();
    instance.setArmed(true);
    feed(...repeat(SPEECH, 6), ...repeat(WAVERING, 6));
    expect(instance.inSpeech).toBe(true);
    feed(SPEECH);
    expect(fired).toEqual([{ startMs: 0, detectedAtMs: 13 * CHUNK_MS }]);

    // A wavering chunk alone does not start a run.
    feed(SILENCE, ...repeat(WAVERING, 20));
    expect(instance.inSpeech).toBe(false);
    expect(fired).toHaveLength(1);
  });

  it('fires again for the next run after a pause', () => {
    const { detector: instance, fired, feed } = detector();
    instance.setArmed(true);
    feed(...repeat(SPEECH, 13), SILENCE, ...repeat(SPEECH, 13));
    expect(fired.map((speech) => speech.startMs)).toEqual([0, 14 * CHUNK_MS]);
  });

  it('says nothing while not armed (the agent is silent), and stops when disarmed', () => {
    const { detector: instance, fired, feed } = detector();
    feed(...repeat(SPEECH, 20), SILENCE);
    expect(fired).toEqual([]);
    instance.setArmed(true);
    instance.setArmed(false);
    feed(...repeat(SPEECH, 20));
    expect(fired).toEqual([]);
  });

  it('counts a run that was already going when it is armed from the moment it was armed', () => {
    const { detector: instance, fired, feed } = detector();
    // The caller has been talking for 640 ms when the agent starts speaking over them.
    feed(...repeat(SPEECH, 20));
    instance.setArmed(true);
    feed(...repeat(SPEECH, 12));
    expect(fired).toEqual([]);
    feed(SPEECH);
    expect(fired).toEqual([{ startMs: 20 * CHUNK_MS, detectedAtMs: 33 * CHUNK_MS }]);
  });

  it('can fire again in the same run for the next reply once re-armed', () => {
    const { detector: instance, fired, feed } = detector();
    instance.setArmed(true);
    feed(...repeat(SPEECH, 13));
    expect(fired).toHaveLength(1);
    instance.setArmed(false);
    instance.setArmed(true);
    feed(...repeat(SPEECH, 13));
    expect(fired).toHaveLength(2);
  });

  describe('backchannels (runs over the agent that end before minSpeechMs)', () => {
    it('reports each short run heard while armed, with where it began and ended', () => {
      const { detector: instance, fired, backchannels, feed } = detector();
      instance.setArmed(true);
      feed(...repeat(SILENCE, 2), ...repeat(SPEECH, 8), ...repeat(WAVERING, 2), SILENCE, ...repeat(SPEECH, 3), SILENCE);
      expect(fired).toEqual([]);
      // 64 ms .. 384 ms (8 speech + 2 wavering chunks), then 416 ms .. 512 ms.
      expect(backchannels).toEqual([
        { startMs: 2 * CHUNK_MS, endMs: 12 * CHUNK_MS },
        { startMs: 13 * CHUNK_MS, endMs: 16 * CHUNK_MS },
      ]);
    });

    it('does not report a run that interrupted, nor one while disarmed', () => {
      const { detector: instance, fired, backchannels, feed } = detector();
      instance.setArmed(true);
      feed(...repeat(SPEECH, 20), SILENCE);
      expect(fired).toHaveLength(1);
      instance.setArmed(false);
      feed(...repeat(SPEECH, 5), SILENCE);
      expect(backchannels).toEqual([]);
    });

    it('does not report a run that was already going when armed and ended before another speech frame', () => {
      const { detector: instance, backchannels, feed } = detector();
      feed(...repeat(SPEECH, 5));
      instance.setArmed(true);
      feed(SILENCE);
      expect(backchannels).toEqual([]);
    });

    it('reports a run heard while armed that ends after the agent stopped, counted from the agent start', () => {
      const { detector: instance, backchannels, feed } = detector();
      feed(...repeat(SPEECH, 2));
      instance.setArmed(true);
      feed(...repeat(SPEECH, 3));
      instance.setArmed(false);
      feed(SILENCE);
      expect(backchannels).toEqual([{ startMs: 2 * CHUNK_MS, endMs: 5 * CHUNK_MS }]);
    });
  });
});
