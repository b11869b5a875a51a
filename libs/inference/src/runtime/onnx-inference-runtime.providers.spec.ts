/**
 * Provider selection through real worker threads on this machine: onnxruntime-node's CPU build
 * (no CUDA provider library) and no GPU for WebGPU, so `auto` really walks CUDA -> WebGPU -> CPU.
 * Every branch this machine cannot produce is covered by execution-provider.spec.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError, type ComputeUsageEntry, type TensorData } from '../contracts';
import { defaultSileroModelPath } from '../vad/silero-vad';
import * as ort from 'onnxruntime-node';
import { createInferenceRuntime } from './onnx-inference-runtime';
import { PROBE_MODEL_BASE64 } from './probe-model';
import { probeProvider } from './provider-probes';
import { WorkerPool } from './worker-pool';

jest.setTimeout(60_000);

const sileroAxes = { inputs: { input: 0, state: 1 }, outputs: { output: 0, stateN: 1 } };
const sileroChunk = (): Record<string, TensorData> => ({
  input: { type: 'float32', data: new Float32Array(288), dims: [1, 288] },
  state: { type: 'float32', data: new Float32Array(256), dims: [2, 1, 128] },
  sr: { type: 'int64', data: BigInt64Array.of(8000n), dims: [] },
});

function capturingLogger(): { log: jest.Mock; warn: jest.Mock; warnings: () => string[] } {
  const warn = jest.fn();
  return { log: jest.fn(), warn, warnings: () => warn.mock.calls.map((call) => String(call[0])) };
}

afterEach(() => jest.restoreAllMocks());

describe('execution provider selection on this machine (CPU build, no GPU)', () => {
  it("'auto' ends on CPU after exactly two fallbacks, CUDA then WebGPU, each logged once with its reason", async () => {
    const logger = capturingLogger();
    const runtime = await createInferenceRuntime({ device: 'auto', workers: 1, logger });
    try {
      expect(runtime.device).toBe('cpu');
      const report = runtime.providerReport();
      expect(report).toMatchObject({ requested: 'auto', device: 'cpu', models: {}, modelFallbacks: [] });
      expect(report.fallbacks.map((fallback) => fallback.provider)).toEqual(['cuda', 'webgpu']);
      for (const fallback of report.fallbacks) expect(fallback.reason.trim()).not.toBe('');
      // No GPU here, so no hint to install the CUDA build (nvidia-gpu.spec.ts has the case with one).
      expect(report.fallbacks[0]!.reason).toBe('no NVIDIA GPU on this machine (no /dev/nvidia0, no nvidia-smi)');
      const [cudaReason, webgpuReason] = report.fallbacks.map((fallback) => fallback.reason);
      expect(logger.warnings()).toEqual([`inference: CUDA unavailable (${cudaReason}): trying WebGPU`, `inference: WebGPU unavailable (${webgpuReason}): using CPU`]);
      expect(logger.log.mock.calls.map((call) => String(call[0]))).toEqual([expect.stringMatching(/^Inference runtime: CPU execution provider \(requested auto\), 1 worker thread/)]);
    } finally {
      await runtime.close();
    }
  });

  it("'cpu' neither probes a GPU nor logs a fallback", async () => {
    const probe = jest.spyOn(WorkerPool.prototype, 'probe');
    const logger = capturingLogger();
    const runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger });
    try {
      expect(probe).not.toHaveBeenCalled();
      expect(logger.warn).not.toHaveBeenCalled();
      expect(runtime.providerReport()).toEqual({ requested: 'cpu', device: 'cpu', fallbacks: [], models: {}, modelFallbacks: [], precisions: {}, precisionFallbacks: [] });
    } finally {
      await runtime.close();
    }
  });

  it("'webgpu' refuses to start, naming WebGPU and the reason, instead of running on CPU", async () => {
    const logger = capturingLogger();
    const attempt = createInferenceRuntime({ device: 'webgpu', workers: 1, logger });
    await expect(attempt).rejects.toBeInstanceOf(EngineError);
    await expect(attempt).rejects.toMatchObject({ code: 'unavailable', retryable: false });
    await expect(attempt).rejects.toThrow(/^WebGPU execution provider requested \(device=webgpu\) but not available: \S.+/);
    expect(logger.warn).not.toHaveBeenCalled();
  });
});

describe('a WebGPU session that onnxruntime itself refuses', () => {
  const fakeVulkanDir = mkdtempSync(join(tmpdir(), 'switchboard-fake-vulkan-'));
  const savedPath = process.env['LD_LIBRARY_PATH'];
  afterAll(() => {
    if (savedPath === undefined) delete process.env['LD_LIBRARY_PATH'];
    else process.env['LD_LIBRARY_PATH'] = savedPath;
    rmSync(fakeVulkanDir, { recursive: true, force: true });
  });

  // With a Vulkan loader seemingly present the probe really asks onnxruntime for a WebGPU session,
  // and Dawn finds no adapter here (it may print its own warning to stderr): the reason is
  // onnxruntime's first line, and CPU sessions can still be created after it. Called in this thread: a
  // worker thread would not see this test's LD_LIBRARY_PATH (Jest sandboxes process.env).
  (process.platform === 'linux' ? it : it.skip)("reports onnxruntime's first error line as the reason, and CPU sessions can still be created", async () => {
    writeFileSync(join(fakeVulkanDir, 'libvulkan.so.1'), '');
    process.env['LD_LIBRARY_PATH'] = fakeVulkanDir; // read by the probe's library check, not by the dynamic loader
    const result = await probeProvider('webgpu');
    expect(result.available).toBe(false);
    expect(result.reason).toMatch(/^creating a WebGPU session failed: \S[^\n]*$/);
    const session = await ort.InferenceSession.create(Buffer.from(PROBE_MODEL_BASE64, 'base64'), { executionProviders: ['cpu'], logSeverityLevel: 4 });
    // (Not run here: Jest's typed arrays are of another realm than onnxruntime's.)
    expect(session.inputNames).toEqual(['x']);
    await session.release();
  });
});

describe('per-model pins through real workers', () => {
  it('a model pinned to cpu under auto runs on CPU and reports CPU (handle, report, compute usage), with no extra line', async () => {
    const logger = capturingLogger();
    const usage: ComputeUsageEntry[] = [];
    const runtime = await createInferenceRuntime({ device: 'auto', workers: 1, logger, modelDevices: { 'silero-vad-v5': 'cpu' }, usageSink: { record: (entry) => usage.push(entry) } });
    try {
      const warningsAtStart = logger.warnings().length;
      const model = await runtime.loadModel({ name: 'silero-vad-v5', path: defaultSileroModelPath(), batchAxes: sileroAxes });
      expect(model.device).toBe('cpu');
      await model.run(sileroChunk(), { callId: 'call-1' });
      expect(usage).toEqual([expect.objectContaining({ callId: 'call-1', model: 'silero-vad-v5', device: 'cpu' })]);
      expect(runtime.providerReport().models).toEqual({ 'silero-vad-v5': 'cpu' });
      expect(logger.warnings()).toHaveLength(warningsAtStart);
    } finally {
      await runtime.close();
    }
  });

  it('a model pinned to webgpu falls back to the runtime provider with one line naming it, and reports where it really runs', async () => {
    const logger = capturingLogger();
    const usage: ComputeUsageEntry[] = [];
    // 'cpu' never probed WebGPU: the pin probes it on demand, once for both loads.
    const probe = jest.spyOn(WorkerPool.prototype, 'probe');
    const runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger, modelDevices: { vad: 'webgpu' }, usageSink: { record: (entry) => usage.push(entry) } });
    try {
      const pinned = await runtime.loadModel({ name: 'vad', path: defaultSileroModelPath(), batchAxes: sileroAxes });
      const unpinned = await runtime.loadModel({ name: 'vad-unpinned', path: defaultSileroModelPath(), batchAxes: sileroAxes });
      expect(pinned.device).toBe('cpu');
      expect(unpinned.device).toBe('cpu');
      expect(probe.mock.calls).toEqual([['webgpu']]);
      const warnings = logger.warnings();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^inference: model 'vad' is pinned to WebGPU, but WebGPU is unavailable \(\S.+\): running it on CPU$/);
      await pinned.run(sileroChunk(), { callId: 'call-2' });
      expect(usage).toEqual([expect.objectContaining({ model: 'vad', device: 'cpu' })]);
      const report = runtime.providerReport();
      expect(report.models).toEqual({ vad: 'cpu', 'vad-unpinned': 'cpu' });
      expect(report.modelFallbacks).toEqual([{ model: 'vad', pinned: 'webgpu', device: 'cpu', reason: expect.stringMatching(/\S/) }]);
    } finally {
      await runtime.close();
    }
  });
});


describe('WebGPU keeps to one worker thread (one WebGPU device per process)', () => {
  const webGpuThere = (): void => {
    jest.spyOn(WorkerPool.prototype, 'probe').mockImplementation(async (provider) => ({ available: provider === 'webgpu', reason: provider === 'webgpu' ? 'adapter found' : 'no cuda here' }));
  };

  it('the runtime on WebGPU asked for 2 workers runs 1, and says why', async () => {
    webGpuThere();
    const logger = capturingLogger();
    const runtime = await createInferenceRuntime({ device: 'webgpu', workers: 2, logger });
    try {
      expect(runtime.device).toBe('webgpu');
      expect(runtime.workerCount).toBe(1);
      expect(logger.warnings()).toEqual([expect.stringMatching(/^inference: WebGPU runs on 1 worker thread, not 2: /)]);
      expect(String(logger.log.mock.calls[0]?.[0])).toMatch(/WebGPU execution provider \(requested webgpu\), 1 worker thread/);
    } finally {
      await runtime.close();
    }
  });

  it('a model pinned to a WebGPU that is there also means 1 worker; pinned to one that is not, the CPU keeps 2', async () => {
    webGpuThere();
    const pinned = await createInferenceRuntime({ device: 'cpu', workers: 2, modelDevices: { 'whisper-base.en': 'webgpu' }, logger: capturingLogger() });
    const pinnedCount = pinned.workerCount;
    await pinned.close();
    expect(pinnedCount).toBe(1);

    jest.restoreAllMocks();
    const unavailable = await createInferenceRuntime({ device: 'cpu', workers: 2, modelDevices: { 'whisper-base.en': 'webgpu' }, logger: capturingLogger() });
    const unavailableCount = unavailable.workerCount;
    await unavailable.close();
    expect(unavailableCount).toBe(2);
  });
});
