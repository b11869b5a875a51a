/**
 * Test audio for VAD and turn detection: the flite speech fixtures (8 kHz mu-law), where their
 * speech really is (measured from the audio's energy, not assumed), digital silence and seeded
 * white noise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { concatPcm16, decodeMulaw, rmsDbfs } from '@switchboard/audio';

export const SPEECH_FIXTURES = ['order-status', 'transfer', 'interrupt', 'goodbye', 'hours'] as const;
export type SpeechFixture = (typeof SPEECH_FIXTURES)[number];

const FIXTURE_DIR = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'speech');
const SAMPLE_RATE = 8000;

export function loadSpeech8k(name: SpeechFixture): Int16Array {
  return decodeMulaw(new Uint8Array(readFileSync(join(FIXTURE_DIR, `${name}.8k.ulaw`))));
}

/**
 * Where the speech is: the first and last 10 ms frames within 40 dB of the loudest frame. flite's
 * own near-silent lead-in (around -60 dBFS) stays outside; the quietest consonants (about 30 dB
 * under the vowels) stay inside.
 */
export function speechBoundsMs(pcm: Int16Array): { startMs: number; endMs: number } {
  const frame = SAMPLE_RATE / 100;
  const levels: number[] = [];
  for (let start = 0; start + frame <= pcm.length; start += frame) levels.push(rmsDbfs(pcm, start, start + frame));
  const floor = Math.max(...levels) - 40;
  const first = levels.findIndex((level) => level > floor);
  const last = levels.length - 1 - [...levels].reverse().findIndex((level) => level > floor);
  return { startMs: first * 10, endMs: (last + 1) * 10 };
}

export function silence(durationMs: number): Int16Array {
  return new Int16Array((durationMs * SAMPLE_RATE) / 1000);
}

/**
 * Uniform white noise at `levelDbfs` (the project's convention, as rmsDbfs: a full-scale sine
 * reads 0 dBFS), from a fixed seed (a linear congruential generator).
 */
export function whiteNoise(durationMs: number, levelDbfs: number, seed: number): Int16Array {
  const samples = new Int16Array((durationMs * SAMPLE_RATE) / 1000);
  // Uniform in [-a, a] has RMS a / sqrt(3).
  const rms = (32767 * 10 ** (levelDbfs / 20)) / Math.SQRT2;
  const amplitude = rms * Math.sqrt(3);
  let state = seed >>> 0;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    samples[i] = Math.round((state / 0x1_0000_0000) * 2 * amplitude - amplitude);
  }
  return samples;
}

export function concat(...parts: Int16Array[]): Int16Array {
  return concatPcm16(parts);
}

/** Feeds audio the way a call does: 20 ms frames, one after another. */
export async function pushInFrames(push: (pcm: Int16Array) => Promise<unknown> | void, pcm: Int16Array, frameSamples = 160): Promise<void> {
  for (let start = 0; start < pcm.length; start += frameSamples) await push(pcm.subarray(start, start + frameSamples));
}

/** A quiet logger for tests that do not look at the log. */
export const silentLogger = { log: (): void => undefined, warn: (): void => undefined };
