import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import { EngineError, type TensorData } from '../contracts';
import { defaultSileroModelPath } from '../vad/silero-vad';
import { GATHER_TABLE, silentLogger, writeGatherModel } from '@switchboard/testing';
import { createInferenceRuntime, type OnnxInferenceRuntime } from './onnx-inference-runtime';

jest.setTimeout(60_000);

const sileroAxes = { inputs: { input: 0, state: 1 }, outputs: { output: 0, stateN: 1 } };

function sileroChunk(seed: number): Record<string, TensorData> {
  const input = new Float32Array(288);
  for (let i = 0; i < input.length; i++) input[i] = Math.sin(i * 0.07 * seed) * 0.3;
  return {
    input: { type: 'float32', data: input, dims: [1, 288] },
    state: { type: 'float32', data: new Float32Array(256), dims: [2, 1, 128] },
    sr: { type: 'int64', data: BigInt64Array.of(8000n), dims: [] },
  };
}

function capturingLogger(): { log: jest.Mock; warn: jest.Mock; lines: () => string[] } {
  const log = jest.fn();
  const warn = jest.fn();
  return { log, warn, lines: () => [...log.mock.calls, ...warn.mock.calls].map((call) => String(call[0])) };
}

describe('execution provider and thread settings', () => {
  it("'cuda' fails loudly when CUDA is not available, instead of running on CPU", async () => {
    const logger = capturingLogger();
    const attempt = createInferenceRuntime({ device: 'cuda', workers: 1, logger });
    await expect(attempt).rejects.toBeInstanceOf(EngineError);
    await expect(attempt).rejects.toMatchObject({ code: 'unavailable', retryable: false });
    await expect(attempt).rejects.toThrow(/^CUDA execution provider requested \(device=cuda\) but not available: no NVIDIA GPU on this machine/);
  });

  it('logs the thread settings it set explicitly', async () => {
    const logger = capturingLogger();
    const runtime = await createInferenceRuntime({ device: 'cpu', workers: 2, intraOpThreads: 1, interOpThreads: 1, logger });
    try {
      expect(runtime.workerCount).toBe(2);
      expect(logger.lines()).toEqual([
        'Inference runtime: CPU execution provider (requested cpu), 2 worker thread(s), intraOpNumThreads=1, interOpNumThreads=1, executionMode=sequential, graphOptimizationLevel=all, batchMaxDelayMs=2 (when all workers are busy)',
      ]);
    } finally {
      await runtime.close();
    }
  });

  it('rejects bad options with a clear message', async () => {
    await expect(createInferenceRuntime({ device: 'gpu' as 'cuda', logger: silentLogger })).rejects.toThrow(/'auto', 'cuda', 'webgpu' or 'cpu'/);
    await expect(createInferenceRuntime({ workers: 0, logger: silentLogger })).rejects.toThrow(/workers must be a positive integer/);
    await expect(createInferenceRuntime({ modelDevices: { vad: 'gpu' as 'cpu' }, logger: silentLogger })).rejects.toThrow(/"vad"="gpu": must be a model name = cpu, cuda or webgpu/);
  });
});

describe('model hosting', () => {
  let runtime: OnnxInferenceRuntime;

  beforeAll(async () => {
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger });
  });
  afterAll(() => runtime.close());

  it('loads a model once and shares it: a second load returns the same handle', async () => {
    const first = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), batchAxes: sileroAxes });
    const second = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), batchAxes: sileroAxes });
    expect(second).toBe(first);
    expect(first.inputNames).toEqual(['input', 'state', 'sr']);
    expect(first.outputNames).toEqual(['output', 'stateN']);
    await expect(runtime.loadModel({ name: 'silero', path: '/elsewhere/silero.onnx' })).rejects.toMatchObject({ code: 'bad_request' });
  });

  it('reports a missing model file as model_missing', async () => {
    await expect(runtime.loadModel({ name: 'absent', path: '/nonexistent/model.onnx' })).rejects.toMatchObject({ code: 'model_missing', retryable: false });
  });

  it('rejects malformed feeds before they reach a batch, naming what is wrong, and keeps serving', async () => {
    const model = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), batchAxes: sileroAxes });
    const good = sileroChunk(1);
    const { sr: _sr, ...missingSr } = good;
    await expect(model.run(missingSr)).rejects.toThrow(/missing input 'sr'/);
    await expect(model.run({ ...good, state: { type: 'float32', data: new Float32Array(256), dims: [1, 2, 128] } })).rejects.toThrow(/input 'state' dim 0 must be 2/);
    await expect(model.run({ ...good, input: { type: 'float32', data: new Float32Array(100), dims: [1, 288] } })).rejects.toThrow(/need 288 elements, data has 100/);
    await expect(model.run({ ...good, sr: { type: 'int32', data: Int32Array.of(8000), dims: [] } })).rejects.toMatchObject({ code: 'bad_request', retryable: false });
    const result = await model.run(good);
    expect(result.outputs.output!.dims).toEqual([1, 1]);
  });

  it('fails only the bad request when onnxruntime rejects one request of a batch', async () => {
    const modelPath = writeGatherModel();
    const model = await runtime.loadModel({ name: 'gather', path: modelPath, maxBatchRows: 16 });
    rmSync(dirname(modelPath), { recursive: true, force: true }); // each worker holds its session now
    const indices = (...values: bigint[]): Record<string, TensorData> => ({ indices: { type: 'int64', data: BigInt64Array.from(values), dims: [values.length] } });
    const [a, bad, b] = await Promise.allSettled([model.run(indices(1n, 2n)), model.run(indices(99n)), model.run(indices(9n))]);
    expect(a).toMatchObject({ status: 'fulfilled' });
    expect(Array.from((a as PromiseFulfilledResult<{ outputs: Record<string, TensorData> }>).value.outputs.values!.data as Float32Array)).toEqual([GATHER_TABLE[1], GATHER_TABLE[2]]);
    expect(Array.from((b as PromiseFulfilledResult<{ outputs: Record<string, TensorData> }>).value.outputs.values!.data as Float32Array)).toEqual([GATHER_TABLE[9]]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'inference_failed', retryable: false } });
    expect((bad as PromiseRejectedResult).reason.message).toMatch(/out of data bounds/);
  });

  it('answers or fails as retryable a run in flight on a crashed worker, replaces the worker, and runs again', async () => {
    const model = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), batchAxes: sileroAxes });
    const before = await model.run(sileroChunk(3));
    // maxBatchRows 1: handed to the worker at once; 4096 rows keep it busy for a while (~100 ms).
    const rows = 4096;
    const inFlight = model.run({
      input: { type: 'float32', data: new Float32Array(rows * 288), dims: [rows, 288] },
      state: { type: 'float32', data: new Float32Array(2 * rows * 128), dims: [2, rows, 128] },
      sr: { type: 'int64', data: BigInt64Array.of(8000n), dims: [] },
    });
    await runtime.terminateWorker(0);
    // The crash message and the run race inside the worker: when the run's message is handled first, a
    // blocking ONNX run answers before the crash is seen. Either way the caller gets a correct answer or
    // a retryable failure, never a wrong result or a hang.
    const outcome = await inFlight.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    if ('error' in outcome) expect(outcome.error).toMatchObject({ name: 'EngineError', code: 'inference_failed', retryable: true });
    else expect(outcome.result.outputs.output!.dims).toEqual([rows, 1]);
    const after = await model.run(sileroChunk(3));
    expect(after.outputs.output!.data).toEqual(before.outputs.output!.data);
  });

  it('restarts a worker that dies again before answering after a pause, failing runs fast (retryable) meanwhile', async () => {
    const model = await runtime.loadModel({ name: 'silero', path: defaultSileroModelPath(), batchAxes: sileroAxes });
    await model.run(sileroChunk(4)); // the worker has answered: its next crash is a first one
    await runtime.terminateWorker(0); // replaced at once
    await runtime.terminateWorker(0); // the replacement dies before answering: restarted after 100 ms
    await expect(model.run(sileroChunk(4))).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await model.run(sileroChunk(4));
    expect(result.outputs.output!.dims).toEqual([1, 1]);
  });
});

describe('worker entry from compiled JavaScript (as in dist)', () => {
  const outDir = join(__dirname, '..', '..', '..', '..', 'node_modules', '.cache', 'switchboard-inference-js-test', String(process.pid));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('starts .js workers and runs Silero with the same result as from TypeScript', async () => {
    for (const folder of ['runtime', 'contracts']) {
      mkdirSync(join(outDir, folder), { recursive: true });
      for (const file of readdirSync(join(__dirname, '..', folder)).filter((name) => name.endsWith('.ts') && !name.includes('.spec.') && !name.includes('.test-support.'))) {
        const source = readFileSync(join(__dirname, '..', folder, file), 'utf8');
        const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } });
        writeFileSync(join(outDir, folder, file.replace(/\.ts$/, '.js')), outputText);
      }
    }
    const script = `
      const { createInferenceRuntime } = require(${JSON.stringify(join(outDir, 'runtime', 'index.js'))});
      (async () => {
        const runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log() {}, warn() {} } });
        const model = await runtime.loadModel({ name: 'silero', path: ${JSON.stringify(defaultSileroModelPath())}, batchAxes: ${JSON.stringify(sileroAxes)} });
        const input = new Float32Array(288);
        for (let i = 0; i < input.length; i++) input[i] = Math.sin(i * 0.07 * 5) * 0.3;
        const result = await model.run({
          input: { type: 'float32', data: input, dims: [1, 288] },
          state: { type: 'float32', data: new Float32Array(256), dims: [2, 1, 128] },
          sr: { type: 'int64', data: BigInt64Array.of(8000n), dims: [] },
        });
        process.stdout.write(JSON.stringify(Array.from(result.outputs.output.data)));
        await runtime.close();
      })().catch((error) => { console.error(error); process.exit(1); });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { timeout: 30_000 });
    const fromTypeScript = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger });
    try {
      const model = await fromTypeScript.loadModel({ name: 'silero', path: defaultSileroModelPath(), batchAxes: sileroAxes });
      const expected = await model.run(sileroChunk(5));
      expect(JSON.parse(stdout)).toEqual(Array.from(expected.outputs.output!.data as Float32Array));
    } finally {
      await fromTypeScript.close();
    }
  });
});
