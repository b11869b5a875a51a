import { AudioError } from '../audio-error';

export interface SineToneOptions {
  readonly frequencyHz: number;
  readonly sampleRate: number;
  /** Length of the tone; give this or sampleCount. */
  readonly durationMs?: number;
  readonly sampleCount?: number;
  /** Peak level relative to full scale (0 dBFS = peak 32767). Default -6 dBFS. */
  readonly amplitudeDbfs?: number;
  readonly phaseRadians?: number;
}

/** A sine tone as 16-bit PCM (rounded to the nearest integer). */
export function sineTone(options: SineToneOptions): Int16Array {
  const { frequencyHz, sampleRate, amplitudeDbfs = -6, phaseRadians = 0 } = options;
  if (!(sampleRate > 0)) throw new AudioError('invalid_tone', `sampleRate must be positive, got ${sampleRate}`);
  if (!(frequencyHz >= 0 && frequencyHz <= sampleRate / 2)) {
    throw new AudioError('invalid_tone', `frequency ${frequencyHz} Hz is outside 0..${sampleRate / 2} Hz (Nyquist at ${sampleRate} Hz)`);
  }
  if (!(amplitudeDbfs <= 0)) throw new AudioError('invalid_tone', `amplitude must be <= 0 dBFS, got ${amplitudeDbfs}`);
  const sampleCount = options.sampleCount ?? Math.round(((options.durationMs ?? NaN) * sampleRate) / 1000);
  if (!Number.isInteger(sampleCount) || sampleCount < 0) {
    throw new AudioError('invalid_tone', 'give durationMs or sampleCount (a non-negative length)');
  }
  const amplitude = 32767 * Math.pow(10, amplitudeDbfs / 20);
  const step = (2 * Math.PI * frequencyHz) / sampleRate;
  const tone = new Int16Array(sampleCount);
  for (let i = 0; i < sampleCount; i++) {
    // Round half up without Math.round (|0 truncates; the offset keeps the value positive).
    tone[i] = ((amplitude * Math.sin(phaseRadians + step * i) + 32768.5) | 0) - 32768;
  }
  return tone;
}
