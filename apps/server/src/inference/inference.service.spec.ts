import { CallUsageRegistry } from '../usage/call-usage-registry';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAppConfig } from '@switchboard/config';
import type { PinoLogger } from 'nestjs-pino';
import { InferenceService } from './inference.service';

/** A logger that keeps what it was told, so the start-up report can be read back. */
function recordingLogger() {
  const lines: string[] = [];
  const logger = {
    setContext: () => undefined,
    info: (message: unknown) => lines.push(String(message)),
    warn: (message: unknown, text?: string) => lines.push(String(text ?? message)),
  } as unknown as PinoLogger;
  return { logger, lines };
}

describe('InferenceService', () => {
  const modelsDir = mkdtempSync(join(tmpdir(), 'switchboard-models-'));
  afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

  it('reports at start which model features are off and the command that turns each on', async () => {
    const { logger, lines } = recordingLogger();
    const service = new InferenceService(loadAppConfig({ MODELS_DIR: modelsDir }), logger, new CallUsageRegistry());
    await service.onApplicationBootstrap();
    const report = lines.join('\n');
    expect(report).toContain(`MODELS_DIR=${modelsDir}`);
    expect(report).toMatch(/npm run models -- pull \S+/);
  });

  it('starts the runtime on first use with the configured device, once, and closes it on shutdown', async () => {
    const { logger, lines } = recordingLogger();
    const service = new InferenceService(loadAppConfig({ MODELS_DIR: modelsDir, INFERENCE_DEVICE: 'auto', INFERENCE_WORKERS: '1' }), logger, new CallUsageRegistry());
    const runtime = await service.runtime();
    expect(await service.runtime()).toBe(runtime);
    expect(runtime.device).toBe('cpu');
    expect(runtime.workerCount).toBe(1);
    // 'auto' on a machine without the CUDA provider says why it fell back, in one line.
    expect(lines.filter((line) => /CUDA/.test(line))).toHaveLength(1);
    await service.onApplicationShutdown();
  }, 60_000);
});
