import { alaw, mulaw } from 'alawmulaw';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw, sineTone } from '@switchboard/audio';
import { timeInterleaved, type Timing } from './audio-bench-timing';

export interface CodecRow {
  readonly operation: 'mulaw-decode' | 'mulaw-encode' | 'alaw-decode' | 'alaw-encode';
  readonly ours: Timing;
  readonly alawmulaw: Timing;
}

const FRAME_SAMPLES = 160; // 20 ms at 8 kHz

/**
 * 20 ms frames of speech-level audio through both codecs. Ours writes into preallocated arrays
 * (the intended use); alawmulaw's API allocates its output on every call, and that is its cost.
 */
export function benchCodecs(): CodecRow[] {
  const pcm = sineTone({ frequencyHz: 437, sampleRate: 8000, sampleCount: FRAME_SAMPLES, amplitudeDbfs: -12 });
  const mulawFrame = encodeMulaw(pcm);
  const alawFrame = encodeAlaw(pcm);
  const pcmOut = new Int16Array(FRAME_SAMPLES);
  const bytesOut = new Uint8Array(FRAME_SAMPLES);
  let sink = 0;
  const calls = new Map<string, () => void>([
    ['mulaw-decode/ours', () => void decodeMulaw(mulawFrame, pcmOut)],
    ['mulaw-decode/alawmulaw', () => void (sink += mulaw.decode(mulawFrame)[0]!)],
    ['mulaw-encode/ours', () => void encodeMulaw(pcm, bytesOut)],
    ['mulaw-encode/alawmulaw', () => void (sink += mulaw.encode(pcm)[0]!)],
    ['alaw-decode/ours', () => void decodeAlaw(alawFrame, pcmOut)],
    ['alaw-decode/alawmulaw', () => void (sink += alaw.decode(alawFrame)[0]!)],
    ['alaw-encode/ours', () => void encodeAlaw(pcm, bytesOut)],
    ['alaw-encode/alawmulaw', () => void (sink += alaw.encode(pcm)[0]!)],
  ]);
  const timings = timeInterleaved(calls, { warmupCalls: 20_000, rounds: 30, callsPerRound: 2_000 });
  if (Number.isNaN(sink)) throw new Error('unreachable: keeps the alawmulaw results observable');
  const operations = ['mulaw-decode', 'mulaw-encode', 'alaw-decode', 'alaw-encode'] as const;
  return operations.map((operation) => ({
    operation,
    ours: timings.get(`${operation}/ours`)!,
    alawmulaw: timings.get(`${operation}/alawmulaw`)!,
  }));
}
