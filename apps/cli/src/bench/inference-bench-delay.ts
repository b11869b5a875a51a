/**
 * The scheduler's added delay in a call-like load: streams push 20 ms frames on their own timers
 * (random phases, as calls do), so requests arrive spread out and each batch waits up to
 * batchMaxDelayMs for company. Reports the gathering delay (first request in a batch to its
 * hand-off to the worker) and each chunk's whole queue wait (gathering, then waiting for the
 * worker, and the hand-off both ways).
 */
import { mean, percentile } from './inference-bench-stats';
import { benchSpeech, openStreams, startVadRig, type BenchDevice } from './inference-bench-vad';

export interface SchedulerDelay {
  streams: number;
  durationMs: number;
  batches: number;
  meanBatchRows: number;
  gatherP50Ms: number;
  gatherP99Ms: number;
  queueWaitP50Ms: number;
  queueWaitP99Ms: number;
}

const FRAME_MS = 20;
const FRAME_SAMPLES = 160;

export async function measureSchedulerDelay(device: BenchDevice, streamCount: number, durationMs: number): Promise<SchedulerDelay> {
  const rig = await startVadRig(device, 128);
  const speech = benchSpeech();
  const queueWaits: number[] = [];
  const timers: NodeJS.Timeout[] = [];
  try {
    const streams = openStreams(rig.vad, streamCount);
    streams.forEach((stream, index) => {
      stream.listen({ onFrame: (frame) => void queueWaits.push(frame.queueWaitMs) });
      let offset = (index * 7919 * FRAME_SAMPLES) % (speech.length - FRAME_SAMPLES);
      const start = setTimeout(() => {
        timers.push(
          setInterval(() => {
            const frame = speech.subarray(offset, offset + FRAME_SAMPLES);
            offset = offset + 2 * FRAME_SAMPLES > speech.length ? 0 : offset + FRAME_SAMPLES;
            stream.push(frame);
          }, FRAME_MS),
        );
      }, Math.random() * FRAME_MS);
      timers.push(start);
    });
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    for (const timer of timers) clearInterval(timer);
    await Promise.all(streams.map((stream) => stream.drained()));
    for (const stream of streams) stream.close();
    const batches = rig.batches.slice(Math.floor(rig.batches.length / 10)); // skip the warm-up tenth
    return {
      streams: streamCount,
      durationMs,
      batches: batches.length,
      meanBatchRows: mean(batches.map((batch) => batch.rows)),
      gatherP50Ms: percentile(batches.map((batch) => batch.gatherMs), 0.5),
      gatherP99Ms: percentile(batches.map((batch) => batch.gatherMs), 0.99),
      queueWaitP50Ms: percentile(queueWaits, 0.5),
      queueWaitP99Ms: percentile(queueWaits, 0.99),
    };
  } finally {
    await rig.runtime.close();
  }
}
