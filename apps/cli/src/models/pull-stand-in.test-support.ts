import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { MODEL_CATALOG, modelFolder, type HubCatalogEntry, type ManifestFile, writeManifest } from '@switchboard/inference';
import { HubFileServer, type HubFixtureFile, type StandInSize, writeDecoderLlmStandIn, writePiperStandIn, writeWhisperStandIn } from '@switchboard/testing';
import { runModelsCommand } from '../models.command';

export interface StandInPullResult {
  code: number;
  lines: string[];
}

export interface PullStandInOptions {
  /** Catalog files the stand-in does not write (the engine does not read them), by path. */
  extraFiles?: Readonly<Record<string, string>>;
  /** `--precision` for the pull (the stand-in must have written those variants). */
  precisions?: ReadonlyArray<'fp16' | 'int8'>;
}

/**
 * Pulls catalog model `name` into `modelsDir` exactly as an operator does (`npm run models -- pull
 * <name>`, through the real command), from a local Hub-like server serving what `write` puts in a
 * folder at the catalog's paths: the server then loads it as a pulled model.
 */
function hubEntry(name: string): HubCatalogEntry {
  const entry = MODEL_CATALOG.find((candidate): candidate is HubCatalogEntry => candidate.kind === 'hub' && candidate.name === name);
  if (!entry) throw new Error(`"${name}" is not a Hub model of the catalog`);
  return entry;
}

export async function pullStandIn(modelsDir: string, name: string, write: (folder: string) => Promise<void>, options: PullStandInOptions = {}): Promise<StandInPullResult> {
  const entry = hubEntry(name);
  const folder = await mkdtemp(join(tmpdir(), `switchboard-${name}-stand-in-`));
  try {
    await write(folder);
    const { repo, revision } = entry.source;
    const files: HubFixtureFile[] = [];
    for (const found of await readdir(folder, { recursive: true, withFileTypes: true })) {
      if (!found.isFile()) continue;
      const path = relative(folder, join(found.parentPath, found.name));
      files.push({ repo, revision, path, content: await readFile(join(folder, path)), lfs: path.endsWith('.onnx') });
    }
    for (const [path, content] of Object.entries(options.extraFiles ?? {})) files.push({ repo, revision, path, content: Buffer.from(content) });
    const hub = new HubFileServer({ files });
    await hub.start();
    try {
      const lines: string[] = [];
      const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
      const precision = options.precisions?.length ? ['--precision', options.precisions.join(',')] : [];
      const code = await runModelsCommand(['pull', name, ...precision], { MODELS_DIR: modelsDir, HF_ENDPOINT: hub.url }, io, { retries: 0 });
      return { code, lines };
    } finally {
      await hub.stop();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** `npm run models -- pull whisper-base.en` with stand-in weights; 'realistic' computes what the real model does. */
export function pullWhisperStandIn(modelsDir: string, size: StandInSize): Promise<StandInPullResult> {
  // The catalog lists tokenizer_config.json; the recogniser does not read it.
  return pullStandIn(modelsDir, 'whisper-base.en', (folder) => writeWhisperStandIn(folder, { size }), { extraFiles: { 'tokenizer_config.json': '{}\n' } });
}

/**
 * `npm run models -- pull qwen2.5-0.5b-instruct` (with `--precision int8` when asked) with the
 * stand-in decoder: Qwen2.5's signature, file layout and chat template.
 */
export function pullLlmStandIn(modelsDir: string, options: { int8?: boolean } = {}): Promise<StandInPullResult> {
  const int8 = options.int8 ?? false;
  return pullStandIn(modelsDir, 'qwen2.5-0.5b-instruct', (folder) => writeDecoderLlmStandIn(folder, { int8 }), { precisions: int8 ? ['int8'] : [] });
}

/**
 * Writes catalog model `name` into `modelsDir` as a completed pull leaves it: the files `write` puts
 * at the catalog's paths and a manifest.json of their sizes and sha256s (trusted on first use). For
 * models whose catalog entry pins the real file's sha256, which no stand-in can match, so `pull`
 * rightly refuses it.
 */
export async function placeStandIn(modelsDir: string, name: string, write: (folder: string) => Promise<void>, extraFiles: Readonly<Record<string, string>> = {}): Promise<void> {
  const entry = hubEntry(name);
  const folder = modelFolder(modelsDir, name);
  await write(folder);
  for (const [path, content] of Object.entries(extraFiles)) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeFile(join(folder, path), content);
  }
  const files: ManifestFile[] = [];
  for (const file of entry.files) {
    const content = await readFile(join(folder, file.path));
    files.push({ path: file.path, sizeBytes: content.length, sha256: createHash('sha256').update(content).digest('hex'), checksumSource: 'trust-on-first-use' });
  }
  await writeManifest(modelsDir, {
    manifestVersion: 1,
    name,
    task: entry.task,
    description: entry.description,
    ...(entry.sampleRate === undefined ? {} : { sampleRate: entry.sampleRate }),
    licence: { ...entry.licence },
    source: { repo: entry.source.repo, revision: entry.source.revision, url: `https://huggingface.co/${entry.source.repo}/tree/${entry.source.revision}` },
    files,
    pulledAt: new Date().toISOString(),
  });
}

/**
 * `piper-en_US-lessac-medium` as a pull leaves it, with a stand-in voice of Piper's signature (the
 * catalog pins the real voice's sha256, so this one is placed rather than pulled).
 */
export function placePiperStandIn(modelsDir: string): Promise<void> {
  const voice = 'en/en_US/lessac/medium/en_US-lessac-medium.onnx';
  return placeStandIn(modelsDir, 'piper-en_US-lessac-medium', (folder) => writePiperStandIn(join(folder, voice), { sampleRate: 22_050 }), {
    'en/en_US/lessac/medium/MODEL_CARD': 'Stand-in voice: no training data.\n',
  });
}
