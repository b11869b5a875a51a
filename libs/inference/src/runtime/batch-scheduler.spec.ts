/**
 * The micro-batching scheduler, through the real runtime (worker threads, onnxruntime sessions)
 * on the real Silero v5 weights.
 */
import { performance } from 'node:perf_hooks';
import type { ComputeUsageEntry, ModelHandle, ModelRunResult, TensorData } from '../contracts';
import { defaultSileroModelPath } from '../vad/silero-vad';
import { loadSpeech8k, silentLogger, SPEECH_FIXTURES } from '@switchboard/testing';
import type { BatchRecord } from './inference-runtime-options';
import { createInferenceRuntime, type OnnxInferenceRuntime } from './onnx-inference-runtime';

jest.setTimeout(60_000);

const CHUNK = 256;
const CONTEXT = 32;
const sileroAxes = { inputs: { input: 0, state: 1 }, outputs: { output: 0, stateN: 1 } };
const sr: TensorData = { type: 'int64', data: BigInt64Array.of(8000n), dims: [] };

/** Silero feeds for `rows` streams at chunk `chunkIndex`: context + chunk per row, states stacked on axis 1. */
function sileroFeeds(audio: readonly Int16Array[], states: readonly Float32Array[], chunkIndex: number): Record<string, TensorData> {
  const rows = audio.length;
  const input = new Float32Array(rows * (CONTEXT + CHUNK));
  const state = new Float32Array(2 * rows * 128);
  audio.forEach((pcm, row) => {
    const start = chunkIndex * CHUNK - CONTEXT;
    for (let i = 0; i < CONTEXT + CHUNK; i++) input[row * (CONTEXT + CHUNK) + i] = start + i < 0 ? 0 : pcm[start + i]! / 32768;
    for (let layer = 0; layer < 2; layer++) state.set(states[row]!.subarray(layer * 128, layer * 128 + 128), (layer * rows + row) * 128);
  });
  return { input: { type: 'float32', data: input, dims: [rows, CONTEXT + CHUNK] }, state: { type: 'float32', data: state, dims: [2, rows, 128] }, sr };
}

/** Copies each row's new state back out of a [2, rows, 128] stateN. */
function updateStates(states: Float32Array[], stateN: TensorData): void {
  const rows = stateN.dims[1]!;
  const data = stateN.data as Float32Array;
  states.forEach((state, row) => {
    for (let layer = 0; layer < 2; layer++) state.set(data.subarray((layer * rows + row) * 128, (layer * rows + row + 1) * 128), layer * 128);
  });
}

/**
 * Six calls, one of which sends two streams per request (a 2-row request), through `chunks`
 * chunks. Returns every stream's probabilities and final state.
 */
async function runCalls(model: ModelHandle, chunks: number, concurrently: boolean): Promise<{ probabilities: number[][]; states: Float32Array[] }> {
  const fixtures = SPEECH_FIXTURES.map((name) => loadSpeech8k(name));
  const calls: Int16Array[][] = [[fixtures[0]!], [fixtures[1]!, fixtures[2]!], [fixtures[3]!], [fixtures[4]!], [fixtures[0]!.subarray(4000)], [fixtures[2]!.subarray(1234)]];
  const states = calls.map((streams) => streams.map(() => new Float32Array(256)));
  const probabilities = calls.map((streams) => streams.map((): number[] => []));
  for (let chunk = 0; chunk < chunks; chunk++) {
    const run = (call: number): Promise<ModelRunResult> => model.run(sileroFeeds(calls[call]!, states[call]!, chunk), { callId: `call-${call}` });
    const results: ModelRunResult[] = [];
    if (concurrently) results.push(...(await Promise.all(calls.map((_, call) => run(call)))));
    else for (let call = 0; call < calls.length; call++) results.push(await run(call));
    results.forEach((result, call) => {
      updateStates(states[call]!, result.outputs.stateN!);
      Array.from(result.outputs.output!.data as Float32Array).forEach((p, row) => probabilities[call]![row]!.push(p));
    });
  }
  return { probabilities: probabilities.flat(), states: states.flat() };
}

describe('micro-batching scheduler (real runtime, Silero v5)', () => {
  let runtime: OnnxInferenceRuntime;
  const batches: BatchRecord[] = [];
  const usage: ComputeUsageEntry[] = [];

  beforeAll(async () => {
    runtime = await createInferenceRuntime({
      device: 'cpu',
      workers: 1,
      logger: silentLogger,
      // These tests pin the gathering window itself; the work-conserving default is tested below.
      dispatchWhenIdle: false,
      onBatch: (batch) => batches.push(batch),
      usageSink: { record: (entry) => usage.push(entry) },
    });
  });
  afterAll(() => runtime.close());
  beforeEach(() => {
    batches.length = 0;
    usage.length = 0;
  });

  it('gives batched results bit-exactly equal to one-at-a-time results, for mixed calls (one sending two rows)', async () => {
    const batched = await runtime.loadModel({ name: 'silero-batched', path: defaultSileroModelPath(), maxBatchRows: 64, batchAxes: sileroAxes });
    const single = await runtime.loadModel({ name: 'silero-single', path: defaultSileroModelPath(), maxBatchRows: 1, batchAxes: sileroAxes });
    const together = await runCalls(batched, 40, true);
    const batchedRuns = batches.filter((batch) => batch.model === 'silero-batched');
    const alone = await runCalls(single, 40, false);

    // All six calls (seven rows) met in each batch; one at a time, every batch held one request.
    expect(batchedRuns).toHaveLength(40);
    for (const batch of batchedRuns) expect([batch.requests, batch.rows, batch.queueWaitsMs.length]).toEqual([6, 7, 6]);
    expect(batches.filter((batch) => batch.model === 'silero-single').every((batch) => batch.requests === 1)).toBe(true);

    expect(together.probabilities).toEqual(alone.probabilities);
    together.states.forEach((state, stream) => expect(Buffer.from(state.buffer).equals(Buffer.from(alone.states[stream]!.buffer))).toBe(true));
    // The speech in the fixtures was heard (so the comparison covers real speech, not zeros).
    expect(Math.max(...together.probabilities.flat())).toBeGreaterThan(0.9);
  });

  it('holds a lone request no longer than batchMaxDelayMs (default 2 ms) before running it', async () => {
    const model = await runtime.loadModel({ name: 'silero-delay', path: defaultSileroModelPath(), maxBatchRows: 64, batchAxes: sileroAxes });
    for (let i = 0; i < 20; i++) await model.run(sileroFeeds([new Int16Array(CHUNK)], [new Float32Array(256)], 0));
    const gathers = batches.map((batch) => batch.gatherMs);
    expect(gathers).toHaveLength(20);
    // It did wait for company (a scheduler that ran at once would show ~0 ms). Node timers fire on
    // libuv's whole-millisecond clock, so a 2 ms wait can read as ~1.2 ms on performance.now().
    expect(median(gathers)).toBeGreaterThanOrEqual(1);
    // ...and no longer than the bound: the median allows for timer lateness on a busy shared machine.
    expect(median(gathers)).toBeLessThan(8);
  });

  it('splits one batch of three calls run time by rows, to each call, with the device', async () => {
    const model = await runtime.loadModel({ name: 'silero-usage', path: defaultSileroModelPath(), maxBatchRows: 4, batchAxes: sileroAxes });
    const silence = new Int16Array(CHUNK * 2);
    const results = await Promise.all([
      model.run(sileroFeeds([silence], [new Float32Array(256)], 1), { callId: 'call-a' }),
      model.run(sileroFeeds([silence, silence], [new Float32Array(256), new Float32Array(256)], 1), { callId: 'call-b' }),
      model.run(sileroFeeds([silence], [new Float32Array(256)], 1), { callId: 'call-c' }),
    ]);
    expect(batches).toHaveLength(1);
    const runSeconds = batches[0]!.runMs / 1000;
    expect(results.every((result) => result.runMs === batches[0]!.runMs)).toBe(true);
    expect(usage.map(({ callId, rows, batchRows, device, model: name }) => ({ callId, rows, batchRows, device, model: name }))).toEqual([
      { callId: 'call-a', rows: 1, batchRows: 4, device: 'cpu', model: 'silero-usage' },
      { callId: 'call-b', rows: 2, batchRows: 4, device: 'cpu', model: 'silero-usage' },
      { callId: 'call-c', rows: 1, batchRows: 4, device: 'cpu', model: 'silero-usage' },
    ]);
    expect(usage[0]!.seconds).toBeCloseTo(runSeconds / 4, 12);
    expect(usage[1]!.seconds).toBeCloseTo(runSeconds / 2, 12);
    expect(usage.reduce((sum, entry) => sum + entry.seconds, 0)).toBeCloseTo(runSeconds, 12);
    expect(runSeconds).toBeGreaterThan(0);
  });
});

describe('micro-batching scheduler with a long gathering delay', () => {
  let runtime: OnnxInferenceRuntime;
  let model: ModelHandle;
  const batches: BatchRecord[] = [];

  beforeAll(async () => {
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger, batchMaxDelayMs: 10_000, dispatchWhenIdle: false, onBatch: (batch) => batches.push(batch) });
    model = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), maxBatchRows: 4, batchAxes: sileroAxes });
  });
  afterAll(() => runtime.close());
  beforeEach(() => (batches.length = 0));

  const oneRow = (): Record<string, TensorData> => sileroFeeds([new Int16Array(CHUNK)], [new Float32Array(256)], 0);

  it('runs a batch as soon as it is full, without waiting out the delay', async () => {
    const startedAt = performance.now();
    await Promise.all([model.run(oneRow()), model.run(oneRow()), model.run(oneRow()), model.run(oneRow())]);
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(batches).toEqual([expect.objectContaining({ requests: 4, rows: 4 })]);
    expect(batches[0]!.gatherMs).toBeLessThan(100);
  });

  it('runs a request that fills a batch by itself at once', async () => {
    const fourRows = sileroFeeds([0, 1, 2, 3].map(() => new Int16Array(CHUNK)), [0, 1, 2, 3].map(() => new Float32Array(256)), 0);
    const result = await model.run(fourRows);
    expect(result.outputs.output!.dims).toEqual([4, 1]);
    expect(batches).toEqual([expect.objectContaining({ requests: 1, rows: 4, gatherMs: 0 })]);
  });

  it('drops a cancelled request from its batch; the others still run together', async () => {
    const controller = new AbortController();
    const first = model.run(oneRow());
    const cancelled = model.run(oneRow(), { signal: controller.signal });
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'cancelled', retryable: false });
    const rest = [model.run(oneRow()), model.run(oneRow()), model.run(oneRow())];
    await Promise.all([first, ...rest]);
    expect(batches).toEqual([expect.objectContaining({ requests: 4, rows: 4 })]);
  });
});

describe('work-conserving batching (the default)', () => {
  let runtime: OnnxInferenceRuntime;
  let model: ModelHandle;
  const batches: BatchRecord[] = [];

  beforeAll(async () => {
    // A 10 s window makes "did it wait?" unambiguous on a noisy machine.
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger, batchMaxDelayMs: 10_000, onBatch: (batch) => batches.push(batch) });
    model = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), maxBatchRows: 8, batchAxes: sileroAxes });
  });
  afterAll(() => runtime.close());
  beforeEach(() => (batches.length = 0));

  const oneRow = (): Record<string, TensorData> => sileroFeeds([new Int16Array(CHUNK)], [new Float32Array(256)], 0);

  it('runs a lone request at once when a worker is idle, instead of waiting for company', async () => {
    const startedAt = performance.now();
    await model.run(oneRow());
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(batches).toEqual([expect.objectContaining({ requests: 1, rows: 1 })]);
  });

  it('still batches what arrives in the same tick', async () => {
    await Promise.all([model.run(oneRow()), model.run(oneRow()), model.run(oneRow())]);
    expect(batches).toEqual([expect.objectContaining({ requests: 3, rows: 3 })]);
  });

  it('gathers requests while the worker is busy and runs them together as soon as it is free', async () => {
    const startedAt = performance.now();
    const first = model.run(oneRow());
    // The first batch has been handed to the (only) worker; these arrive while it is busy.
    await new Promise((resolve) => setImmediate(resolve));
    const later = [model.run(oneRow()), model.run(oneRow())];
    await Promise.all([first, ...later]);
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(batches).toEqual([expect.objectContaining({ requests: 1 }), expect.objectContaining({ requests: 2, rows: 2 })]);
  });
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
