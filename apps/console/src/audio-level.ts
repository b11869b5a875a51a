/**
 * The Talk panel's level meters: how loud the microphone and the agent are right now, as a bar
 * and a word. A level jumps up at once and falls back smoothly when the sound stops (a meter that
 * only remembers its peak says nothing about now).
 */

/** -40 dBFS: above a quiet room through noise suppression, below any voice. */
export const SPEAKING_RMS = 0.01;
/** The bar's floor: quieter than this shows empty. */
const FLOOR_DB = -60;

/** RMS (0..1) of PCM16 samples. */
export function rmsOfPcm16(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const sample of samples) sum += (sample / 0x8000) ** 2;
  return Math.sqrt(sum / samples.length);
}

/** A level as the bar's fill (0..1), on a decibel scale as ears hear it: -60 dBFS empty, 0 dBFS full. */
export function levelFraction(rms: number): number {
  if (!(rms > 0)) return 0;
  const db = 20 * Math.log10(rms);
  return Math.min(1, Math.max(0, (db - FLOOR_DB) / -FLOOR_DB));
}

export function levelWord(rms: number): 'speaking' | 'quiet' {
  return rms >= SPEAKING_RMS ? 'speaking' : 'quiet';
}

/** A level that rises with each louder reading and otherwise halves every `halfLifeMs`. */
export class DecayingLevel {
  private held = 0;
  private heldAtMs = 0;

  constructor(private readonly halfLifeMs = 150) {}

  push(rms: number, atMs: number): void {
    if (rms >= this.read(atMs)) {
      this.held = rms;
      this.heldAtMs = atMs;
    }
  }

  read(atMs: number): number {
    const elapsed = Math.max(0, atMs - this.heldAtMs);
    return this.held * 2 ** (-elapsed / this.halfLifeMs);
  }

  reset(): void {
    this.held = 0;
    this.heldAtMs = 0;
  }
}
