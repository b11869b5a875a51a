/**
 * What every inference bench section shares: a runtime hosting the real Silero VAD, and speech
 * for the streams to push (the flite fixtures, looped, each stream starting somewhere else).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { concatPcm16, decodeMulaw } from '@switchboard/audio';
import {
  type BatchRecord,
  createInferenceRuntime,
  type OnnxInferenceRuntime,
  SileroVad,
  type SileroVadStream,
} from '@switchboard/inference';

export const CHUNK_SAMPLES = 256;
export const CHUNK_MS = 32;

export type BenchDevice = 'cpu' | 'cuda' | 'webgpu';

export interface VadRig {
  runtime: OnnxInferenceRuntime;
  vad: SileroVad;
  batches: BatchRecord[];
}

/** One worker thread with one intra-op thread: the "one core" every figure is per. */
export async function startVadRig(device: BenchDevice, maxBatchRows: number): Promise<VadRig> {
  const batches: BatchRecord[] = [];
  const quiet = { log: (): void => undefined, warn: (): void => undefined };
  const runtime = await createInferenceRuntime({ device, workers: 1, intraOpThreads: 1, interOpThreads: 1, logger: quiet, onBatch: (batch) => batches.push(batch) });
  const vad = await SileroVad.load(runtime, { maxBatchRows });
  return { runtime, vad, batches };
}

let speech: Int16Array | undefined;

/** About 17 s of speech: the five fixtures back to back. */
export function benchSpeech(): Int16Array {
  if (speech) return speech;
  const dir = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'speech');
  const parts = ['order-status', 'transfer', 'interrupt', 'goodbye', 'hours'].map((name) => decodeMulaw(new Uint8Array(readFileSync(join(dir, `${name}.8k.ulaw`)))));
  speech = concatPcm16(parts);
  return speech;
}

/** Stream `index`'s chunk number `chunk`: a view into the looped speech (no copy). */
export function chunkFor(index: number, chunk: number): Int16Array {
  const audio = benchSpeech();
  const chunksInAudio = Math.floor(audio.length / CHUNK_SAMPLES);
  const start = ((index * 37 + chunk) % chunksInAudio) * CHUNK_SAMPLES;
  return audio.subarray(start, start + CHUNK_SAMPLES);
}

export function openStreams(vad: SileroVad, count: number): SileroVadStream[] {
  return Array.from({ length: count }, (_, index) => vad.createStream(`bench-${index}`));
}

/** Every stream pushes its next 32 ms chunk at once; resolves when all have their frame. */
export async function pushRound(streams: readonly SileroVadStream[], chunk: number): Promise<void> {
  await Promise.all(
    streams.map((stream, index) => {
      stream.push(chunkFor(index, chunk));
      return stream.drained();
    }),
  );
}
