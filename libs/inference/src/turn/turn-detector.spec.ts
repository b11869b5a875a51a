/**
 * Turn detection on the real Silero VAD (v5 weights, through the inference runtime) and the
 * speech fixtures. The end-of-turn classifier is an in-test implementation of its interface.
 */
import type { RunContext } from '../contracts';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../runtime';
import { SileroVad } from '../vad/silero-vad';
import { concatSpeech as concat, loadSpeech8k, pushInFrames, silence, silentLogger, speechBoundsMs, whiteNoise } from '@switchboard/testing';
import type { VadFrame } from '../vad/vad-frame';
import { pushAndCollect } from '../vad/vad-listeners';
import type { EndOfTurnClassifier } from './end-of-turn-classifier';
import { TurnDetector } from './turn-detector';
import type { TurnDetectorOptions } from './turn-detector-options';
import type { SpeechStartedEvent, TurnEndedEvent, TurnEvent } from './turn-events';

jest.setTimeout(60_000);

const CHUNK_MS = 32;

/** Push one frame and wait until the detector has acted on what it completed. */
function pushAndDrain(detector: TurnDetector, frame: Int16Array): Promise<void> {
  detector.push(frame);
  return detector.drained();
}

describe('TurnDetector (real Silero VAD)', () => {
  let runtime: OnnxInferenceRuntime;
  let vad: SileroVad;
  let streamCount = 0;

  beforeAll(async () => {
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger });
    vad = await SileroVad.load(runtime);
  });
  afterAll(() => runtime.close());

  async function detect(pcm: Int16Array, options: TurnDetectorOptions = {}): Promise<TurnEvent[]> {
    const detector = new TurnDetector(vad.createStream(`call-${++streamCount}`), options);
    const events: TurnEvent[] = [];
    detector.onEvent((event) => events.push(event));
    await pushInFrames((frame) => pushAndDrain(detector, frame), pcm);
    detector.close();
    return events;
  }

  async function vadFrames(pcm: Int16Array): Promise<VadFrame[]> {
    const stream = vad.createStream(`frames-${++streamCount}`);
    const frames = await pushAndCollect(stream, pcm);
    stream.close();
    return frames;
  }

  const turns = (events: TurnEvent[]): TurnEndedEvent[] => events.filter((event): event is TurnEndedEvent => event.type === 'turn_ended');
  const samples = (pcm: Int16Array, fromMs: number, toMs: number): Int16Array => pcm.slice(fromMs * 8, toMs * 8);

  it('reports speech start and turn end where the speech is, with the utterance audio and its prefix padding', async () => {
    const pcm = concat(loadSpeech8k('transfer'), silence(1000));
    const truth = speechBoundsMs(pcm);
    const events = await detect(pcm, { minSpeechMs: 250, minSilenceMs: 500, prefixPaddingMs: 300 });
    expect(events.map((event) => event.type)).toEqual(['speech_started', 'turn_ended']);
    const started = events[0] as SpeechStartedEvent;
    const ended = events[1] as TurnEndedEvent;

    expect(Math.abs(started.startMs - truth.startMs)).toBeLessThanOrEqual(100);
    expect(started.detectedAtMs - started.startMs).toBeGreaterThanOrEqual(250);
    expect(started.detectedAtMs - started.startMs).toBeLessThan(250 + CHUNK_MS);
    expect(started.audioStartMs).toBe(started.startMs - 300);
    expect(started.audio).toEqual(samples(pcm, started.audioStartMs, started.detectedAtMs));

    expect(ended.reason).toBe('silence');
    expect(ended.startMs).toBe(started.startMs);
    expect(Math.abs(ended.endMs - truth.endMs)).toBeLessThanOrEqual(100);
    expect(ended.detectedAtMs - ended.endMs).toBeGreaterThanOrEqual(500);
    expect(ended.detectedAtMs - ended.endMs).toBeLessThan(500 + CHUNK_MS);
    expect(ended.audio).toEqual(samples(pcm, ended.audioStartMs, ended.endMs));
  });

  it('finds two turns in two utterances a second apart, and keeps a sentence pause inside one turn', async () => {
    const first = loadSpeech8k('order-status'); // two sentences with a short pause between them
    const second = loadSpeech8k('hours');
    const pcm = concat(first, silence(1000), second, silence(1000));
    const found = turns(await detect(pcm, { minSilenceMs: 500 }));
    expect(found).toHaveLength(2);
    const firstTruth = speechBoundsMs(first);
    const secondOffsetMs = first.length / 8 + 1000;
    const secondTruth = speechBoundsMs(second);
    expect(Math.abs(found[0]!.startMs - firstTruth.startMs)).toBeLessThanOrEqual(100);
    expect(Math.abs(found[0]!.endMs - firstTruth.endMs)).toBeLessThanOrEqual(100);
    expect(Math.abs(found[1]!.startMs - (secondOffsetMs + secondTruth.startMs))).toBeLessThanOrEqual(100);
    expect(Math.abs(found[1]!.endMs - (secondOffsetMs + secondTruth.endMs))).toBeLessThanOrEqual(100);
  });

  it('ignores a speech blip shorter than minSpeechMs', async () => {
    const speech = loadSpeech8k('hours');
    const blip = concat(silence(1000), speech.subarray(8 * 800, 8 * 920), silence(1500));
    // The VAD does hear it (so this is a real blip, not silence)...
    expect(Math.max(...(await vadFrames(blip)).map((frame) => frame.probability))).toBeGreaterThanOrEqual(0.5);
    // ...and turn detection does nothing with it.
    expect(await detect(blip, { minSpeechMs: 250 })).toEqual([]);
  });

  it('reports nothing on 5 s of silence or of -50 dBFS white noise', async () => {
    expect(await detect(silence(5000))).toEqual([]);
    expect(await detect(whiteNoise(5000, -50, 7))).toEqual([]);
  });

  it('rides out a wavering probability between the thresholds (hysteresis); without it the turn breaks up', async () => {
    const pcm = concat(loadSpeech8k('interrupt'), silence(1000));
    const probabilities = (await vadFrames(pcm)).map((frame) => frame.probability);
    // Precondition from the real frames: inside the speech, a run of chunks between 0.35 and 0.5.
    const wavering = probabilities.findIndex((p, i) => i > 0 && probabilities[i - 1]! >= 0.5 && p < 0.5 && p >= 0.35 && probabilities[i + 1]! < 0.5 && probabilities[i + 1]! >= 0.35);
    expect(wavering).toBeGreaterThan(0);

    const withHysteresis = turns(await detect(pcm, { threshold: 0.5, negativeThreshold: 0.35, minSilenceMs: 64, minSpeechMs: 64 }));
    const without = turns(await detect(pcm, { threshold: 0.5, negativeThreshold: 0.5, minSilenceMs: 64, minSpeechMs: 64 }));
    expect(withHysteresis).toHaveLength(1);
    expect(without.length).toBeGreaterThan(1);
    expect(without[0]!.endMs).toBe(wavering * CHUNK_MS);
  });

  it('ends a turn that runs past maxTurnMs', async () => {
    const pcm = concat(loadSpeech8k('order-status'), silence(1000));
    const [ended] = turns(await detect(pcm, { maxTurnMs: 2000 }));
    expect(ended!.reason).toBe('max_duration');
    expect(ended!.endMs - ended!.startMs).toBeGreaterThanOrEqual(2000);
    expect(ended!.endMs - ended!.startMs).toBeLessThan(2000 + CHUNK_MS);
  });

  describe('with an end-of-turn classifier', () => {
    /** A classifier answering from a script, recording what it was asked. */
    function scriptedClassifier(answers: Array<number | Error | Promise<number>>): EndOfTurnClassifier & { calls: Array<{ audio16k: Int16Array; context?: RunContext }> } {
      const calls: Array<{ audio16k: Int16Array; context?: RunContext }> = [];
      return {
        name: 'scripted',
        calls,
        probability: async (audio16k, context) => {
          calls.push({ audio16k, context });
          const answer = answers[calls.length - 1] ?? 0;
          if (answer instanceof Error) throw answer;
          return answer;
        },
      };
    }
    const options = (classifier: EndOfTurnClassifier): TurnDetectorOptions => ({ endOfTurnClassifier: classifier, eotMinSilenceMs: 200, minSilenceMs: 800, eotThreshold: 0.5 });

    it('ends the turn early when the classifier is confident, after eotMinSilenceMs instead of minSilenceMs', async () => {
      const pcm = concat(loadSpeech8k('goodbye'), silence(1500));
      const classifier = scriptedClassifier([0.9]);
      const events = await detect(pcm, options(classifier));
      const [ended] = turns(events);
      expect(ended).toMatchObject({ reason: 'end_of_turn_model', endOfTurnProbability: 0.9 });
      expect(ended!.detectedAtMs - ended!.endMs).toBeGreaterThanOrEqual(200);
      expect(ended!.detectedAtMs - ended!.endMs).toBeLessThan(200 + CHUNK_MS);
      expect(classifier.calls).toHaveLength(1);
      // It heard the utterance so far at 16 kHz (twice the 8 kHz samples), with the call's id.
      const heardMs = ended!.detectedAtMs - ended!.audioStartMs;
      expect(Math.abs(classifier.calls[0]!.audio16k.length - heardMs * 16)).toBeLessThanOrEqual(64);
      expect(classifier.calls[0]!.context?.callId).toMatch(/^call-/);
    });

    it('waits out minSilenceMs when the classifier thinks the speaker is not done, asking once per pause', async () => {
      const pcm = concat(loadSpeech8k('goodbye'), silence(1500));
      const classifier = scriptedClassifier([0.2, 0.2]);
      const [ended] = turns(await detect(pcm, options(classifier)));
      expect(ended!.reason).toBe('silence');
      expect(ended!.detectedAtMs - ended!.endMs).toBeGreaterThanOrEqual(800);
      expect(classifier.calls).toHaveLength(1);
    });

    it('ignores an answer that arrives after the caller has started speaking again', async () => {
      // Speech, a 350 ms pause (past eotMinSilenceMs, short of minSilenceMs), speech.
      const goodbye = loadSpeech8k('goodbye');
      const hours = loadSpeech8k('hours');
      const first = goodbye.subarray(0, speechBoundsMs(goodbye).endMs * 8);
      const pcm = concat(first, silence(350), hours.subarray(speechBoundsMs(hours).startMs * 8), silence(1500));
      let answerLate!: (probability: number) => void;
      const late = new Promise<number>((resolve) => (answerLate = resolve));
      const classifier = scriptedClassifier([late, 0.1]);
      const detector = new TurnDetector(vad.createStream('late-answer'), options(classifier));
      const events: TurnEvent[] = [];
      detector.onEvent((event) => events.push(event));
      // Up to well into the second utterance, then the first pause's (now stale) answer arrives.
      const resumeAtSamples = (first.length / 8 + 350 + 1000) * 8;
      await pushInFrames((frame) => pushAndDrain(detector, frame), pcm.subarray(0, resumeAtSamples));
      answerLate(0.99);
      await pushInFrames((frame) => pushAndDrain(detector, frame), pcm.subarray(resumeAtSamples));
      detector.close();
      const found = turns(events);
      expect(found).toHaveLength(1);
      expect(found[0]!.reason).toBe('silence');
      expect(found[0]!.endMs).toBeGreaterThan(first.length / 8 + 350);
      expect(classifier.calls).toHaveLength(2);
    });

    it('reports a failing classifier and falls back to minSilenceMs', async () => {
      const pcm = concat(loadSpeech8k('goodbye'), silence(1500));
      const events = await detect(pcm, options(scriptedClassifier([new Error('model unavailable')])));
      expect(events.map((event) => event.type)).toEqual(['speech_started', 'end_of_turn_model_failed', 'turn_ended']);
      expect(turns(events)[0]!.reason).toBe('silence');
    });
  });

  it('refuses inconsistent options and non-PCM input with clear errors', () => {
    const stream = vad.createStream('options');
    expect(() => new TurnDetector(stream, { threshold: 0.5, negativeThreshold: 0.6 })).toThrow(/negativeThreshold \(0.6\) must not exceed threshold \(0.5\)/);
    const classifier: EndOfTurnClassifier = { name: 'any', probability: async () => 1 };
    expect(() => new TurnDetector(stream, { endOfTurnClassifier: classifier, eotMinSilenceMs: 600, minSilenceMs: 500 })).toThrow(/eotMinSilenceMs \(600\) must be shorter than minSilenceMs \(500\)/);
    const detector = new TurnDetector(stream);
    expect(() => detector.push(new Uint8Array(160) as unknown as Int16Array)).toThrow(expect.objectContaining({ code: 'bad_request' }));
    detector.close();
  });
});
