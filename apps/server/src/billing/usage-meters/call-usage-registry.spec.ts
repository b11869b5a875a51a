import { BatchScheduler, type TensorData, type WorkerPool } from '@switchboard/inference';
import { NO_AI_USAGE } from '@switchboard/billing';
import { CallUsageRegistry } from './call-usage-registry';

/** A worker pool that "runs" every batch in a fixed 30 ms and keeps the batch sizes it saw. */
class FixedTimeWorkerPool {
  readonly batchRows: number[] = [];

  hasIdleWorker(): boolean {
    return false;
  }

  async run(_model: string, feeds: Record<string, TensorData>): Promise<{ outputs: Record<string, TensorData>; runMs: number; workerIndex: number }> {
    const rows = feeds.input!.dims[0]!;
    this.batchRows.push(rows);
    return { outputs: { output: { type: 'float32', data: new Float32Array(rows), dims: [rows] } }, runMs: 30, workerIndex: 0 };
  }
}

function oneRow(): Record<string, TensorData> {
  return { input: { type: 'float32', data: new Float32Array(2), dims: [1, 2] } };
}

describe('CallUsageRegistry', () => {
  it('opens one meter per call (open is idempotent) and forgets it on close', () => {
    const registry = new CallUsageRegistry();
    const meter = registry.open('call-1');
    expect(registry.open('call-1')).toBe(meter);
    expect(registry.meterFor('call-1')).toBe(meter);
    meter.addSttAudio(2);

    expect(registry.close('call-1')).toEqual({ ...NO_AI_USAGE, sttAudioMs: 2000 });
    expect(registry.meterFor('call-1')).toBeUndefined();
    expect(registry.close('call-1')).toEqual(NO_AI_USAGE);
    // Reopened after close: a fresh meter, not the old totals.
    expect(registry.open('call-1').snapshot()).toEqual(NO_AI_USAGE);
  });

  it('routes compute entries to the call: cuda to GPU, cpu to CPU', () => {
    const registry = new CallUsageRegistry();
    registry.open('call-1');
    registry.open('call-2');
    registry.record({ callId: 'call-1', model: 'whisper', device: 'cuda', seconds: 0.0125, rows: 1, batchRows: 1 });
    registry.record({ callId: 'call-1', model: 'silero', device: 'cpu', seconds: 0.0000016, rows: 1, batchRows: 4 });
    registry.record({ callId: 'call-2', model: 'silero', device: 'cpu', seconds: 0.002, rows: 3, batchRows: 4 });

    expect(registry.close('call-1')).toMatchObject({ gpuMicroseconds: 12_500, cpuMicroseconds: 2 });
    expect(registry.close('call-2')).toMatchObject({ gpuMicroseconds: 0, cpuMicroseconds: 2000 });
    expect(registry.droppedComputeEntries).toBe(0);
  });

  it('ignores and counts entries for unknown or already closed calls, without throwing', () => {
    const registry = new CallUsageRegistry();
    registry.open('ended');
    registry.close('ended');
    expect(() => registry.record({ callId: 'ended', model: 'kokoro', device: 'cuda', seconds: 0.2, rows: 1, batchRows: 2 })).not.toThrow();
    registry.record({ callId: 'never-opened', model: 'kokoro', device: 'cuda', seconds: 0.2, rows: 1, batchRows: 2 });
    expect(registry.droppedComputeEntries).toBe(2);
    expect(registry.meterFor('ended')).toBeUndefined();
  });

  it('charges a batch shared by three calls one third of its run time each (the real scheduler as sink caller)', async () => {
    const registry = new CallUsageRegistry();
    const pool = new FixedTimeWorkerPool();
    const scheduler = new BatchScheduler({
      model: 'stand-in',
      device: 'cuda',
      maxBatchRows: 8,
      batchMaxDelayMs: 0,
      dispatchWhenIdle: false,
      axes: { inputs: new Map([['input', 0]]), outputs: new Map([['output', 0]]) },
      inputNames: ['input'],
      pool: pool as unknown as WorkerPool,
      usageSink: registry,
    });
    const calls = ['call-a', 'call-b', 'call-c'];
    for (const callId of calls) registry.open(callId);

    // Submitted in one tick: gathered into one batch of three rows.
    await Promise.all(calls.map((callId) => scheduler.submit(oneRow(), { callId })));

    expect(pool.batchRows).toEqual([3]);
    for (const callId of calls) expect(registry.close(callId)).toMatchObject({ gpuMicroseconds: 10_000, cpuMicroseconds: 0 });
  });
});
