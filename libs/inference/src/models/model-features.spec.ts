import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ModelManifest, writeManifest } from './model-manifest';
import { assessModelFeatures, describeModelFeatures } from './model-features';
import { ModelRegistry } from './model-registry';

/** Writes a model folder like a completed pull (content is irrelevant to the cheap status check). */
async function installFake(modelsDir: string, name: string, files: Record<string, Buffer>): Promise<void> {
  const manifestFiles: ModelManifest['files'] = [];
  for (const [path, content] of Object.entries(files)) {
    const full = join(modelsDir, name, ...path.split('/'));
    await mkdir(join(full, '..'), { recursive: true });
    await writeFile(full, content);
    manifestFiles.push({ path, sizeBytes: content.length, sha256: 'a'.repeat(64), checksumSource: 'trust-on-first-use' });
  }
  await writeManifest(modelsDir, {
    manifestVersion: 1,
    name,
    task: 'asr',
    sampleRate: 16_000,
    licence: { spdx: 'MIT', url: 'https://example.test' },
    source: { repo: 'x/y', revision: 'main', url: 'https://huggingface.co/x/y/tree/main' },
    files: manifestFiles,
    pulledAt: '2026-01-01T00:00:00.000Z',
  });
}

describe('describeModelFeatures (the server start-up report)', () => {
  let modelsDir: string;

  beforeEach(async () => {
    modelsDir = await mkdtemp(join(tmpdir(), 'switchboard-features-'));
  });

  afterEach(async () => {
    await rm(modelsDir, { recursive: true, force: true });
  });

  it('on a fresh install: built-ins on, every optional feature off with the exact command that turns it on', async () => {
    const lines = await describeModelFeatures(new ModelRegistry({ modelsDir }));
    expect(lines).toEqual([
      `Model features (MODELS_DIR=${modelsDir}):`,
      '  on   Voice activity detection (Silero VAD): silero-vad (built-in)',
      '  on   Built-in voice (Flite): flite (built-in)',
      '  off  Local speech recognition (Whisper, Moonshine): agents must use a remote transcription API. Turn on: npm run models -- pull whisper-base.en',
      '  off  Local neural voice (Kokoro): agents use Flite, Piper or a remote voice. Turn on: npm run models -- pull kokoro-82m-v1.0',
      '  off  Local neural voice (Piper): agents use Flite, Kokoro or a remote voice. Turn on: npm run models -- pull piper-en_US-lessac-medium',
      '  off  Local LLM (Qwen2.5): agents need an OpenAI-compatible LLM: a provider key, or Ollama, llama.cpp or vLLM on this machine. Turn on: npm run models -- pull qwen2.5-0.5b-instruct',
      '  off  End-of-turn model (Smart Turn): turns end on VAD silence timing alone. Turn on: npm run models -- pull smart-turn-v3.2',
    ]);
  });

  it('turns a feature on when any of its models is installed, and flags corrupt or half-pulled ones', async () => {
    await installFake(modelsDir, 'whisper-tiny.en', { 'onnx/encoder_model.onnx': Buffer.alloc(64), 'config.json': Buffer.from('{}') });
    await installFake(modelsDir, 'smart-turn-v3.2', { 'smart-turn-v3.2-cpu.onnx': Buffer.alloc(32) });
    await writeFile(join(modelsDir, 'smart-turn-v3.2', 'smart-turn-v3.2-cpu.onnx'), Buffer.alloc(10)); // truncated
    await mkdir(join(modelsDir, 'kokoro-82m-v1.0', 'onnx'), { recursive: true });
    await writeFile(join(modelsDir, 'kokoro-82m-v1.0', 'onnx', 'model_quantized.onnx.partial'), Buffer.alloc(2_500_000));

    const registry = new ModelRegistry({ modelsDir });
    const lines = await describeModelFeatures(registry);
    expect(lines).toContain('  on   Local speech recognition (Whisper, Moonshine): whisper-tiny.en');
    expect(lines).toContain(
      '  off  Local neural voice (Kokoro): agents use Flite, Piper or a remote voice. Turn on: npm run models -- pull kokoro-82m-v1.0 (2.5 MB already downloaded; the pull resumes)',
    );
    expect(lines).toContain('  off  End-of-turn model (Smart Turn): turns end on VAD silence timing alone. Turn on: npm run models -- pull smart-turn-v3.2 --force');
    expect(lines).toContain(
      '       smart-turn-v3.2 is corrupt (smart-turn-v3.2-cpu.onnx: size 10 bytes, expected 32); fix: npm run models -- pull smart-turn-v3.2 --force',
    );

    const states = await assessModelFeatures(registry);
    expect(states.filter((state) => state.on).map((state) => state.feature.id)).toEqual(['vad', 'builtin-voice', 'local-asr']);
  });
});
