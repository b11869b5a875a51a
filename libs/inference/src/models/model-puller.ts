import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { downloadFile } from './file-download';
import { fileSha256 } from './file-sha256';
import { fetchHubFileInfo } from './hub-file-info';
import { DEFAULT_HF_ENDPOINT, endpointHost, hubFileUrl, hubTreeUrl } from './hub-url';
import type { CatalogFile, HubCatalogEntry } from './model-catalog.types';
import { type ChecksumSource, type ManifestFile, type ModelManifest, writeManifest } from './model-manifest';
import { MANIFEST_FILE, PARTIAL_SUFFIX, modelFilePath, modelFolder } from './model-paths';
import { ModelPullError } from './model-pull.error';
import { PRECISION_FILE_SUFFIXES, variantPath, type ModelPrecision } from '../runtime/model-precision';
import type { ModelRegistry } from './model-registry';

export type PullEvent =
  | { type: 'model-start'; name: string; repo: string; revision: string; fileCount: number }
  | { type: 'file-start'; name: string; path: string; totalBytes: number | null; resumedFromBytes: number }
  | { type: 'file-progress'; name: string; path: string; receivedBytes: number; totalBytes: number | null }
  | { type: 'file-done'; name: string; path: string; sizeBytes: number; sha256: string; checksumSource: ChecksumSource }
  /** The file was already complete from an earlier, interrupted pull. */
  | { type: 'file-kept'; name: string; path: string; sizeBytes: number; sha256: string; checksumSource: ChecksumSource }
  | { type: 'retry'; name: string; path: string; attempt: number; delayMs: number; reason: string }
  | { type: 'notice'; name: string; message: string };

export interface PullOptions {
  /** Download every file again, discarding installed files and partial downloads. */
  force?: boolean;
  /** HF_ENDPOINT: the Hub or a mirror (default https://huggingface.co). */
  endpoint?: string;
  /** HF_TOKEN: sent as a Bearer token (gated repositories); never printed. */
  token?: string;
  /** Retries per file after an interrupted transfer or a 429/5xx, each resuming the partial file (default 3). */
  retries?: number;
  /** First retry delay, doubling after (default 1000 ms). */
  retryDelayMs?: number;
  /** A transfer with no data for this long counts as interrupted (default 30 s). */
  idleTimeoutMs?: number;
  fetchImpl?: typeof fetch;
  onEvent?: (event: PullEvent) => void;
  now?: () => Date;
  /**
   * Also pull these numeric variants of each ONNX file (INFERENCE_MODEL_PRECISION), named as the
   * Hub's exports name them (`encoder_model_int8.onnx`, else `encoder_model_quantized.onnx`).
   */
  precisions?: readonly Exclude<ModelPrecision, 'fp32'>[];
}

export type PullResult =
  | { status: 'pulled' | 'already-installed'; name: string; manifest: ModelManifest; trustedOnFirstUse: string[] }
  | { status: 'builtin'; name: string; npmPackage: string };

interface PullContext {
  entry: HubCatalogEntry;
  modelsDir: string;
  endpoint: string;
  headers: Record<string, string>;
  options: Required<Pick<PullOptions, 'retries' | 'retryDelayMs' | 'idleTimeoutMs'>> & { fetchImpl: typeof fetch };
  emit: (event: PullEvent) => void;
}

/**
 * Downloads a catalog model from the Hugging Face Hub into MODELS_DIR/<name>/: each file streams
 * into `<file>.partial` (resumed with a Range request after an interruption), is checked against
 * its size and sha256, then renamed into place; manifest.json is written last, so a model with a
 * manifest is always complete.
 */
export async function pullModel(registry: ModelRegistry, name: string, options: PullOptions = {}): Promise<PullResult> {
  const entry = registry.catalogEntry(name);
  if (entry === undefined) {
    const known = registry.catalog.map((candidate) => candidate.name).join(', ');
    throw new ModelPullError('unknown_model', `unknown model "${name}"; the catalog has: ${known}`, false);
  }
  if (entry.kind === 'builtin') return { status: 'builtin', name, npmPackage: entry.source.npmPackage };

  const modelsDir = registry.modelsDir;
  const folder = modelFolder(modelsDir, name);
  const emit = options.onEvent ?? ((): void => undefined);
  if (options.force) {
    await rm(folder, { recursive: true, force: true });
  } else {
    const installed = await registry.statusOf(name);
    const manifest = await registry.get(name);
    const hasVariants = (wanted: WantedVariant): boolean => manifest !== null && manifest.files.some((file) => wanted.candidates.includes(file.path));
    if (installed?.state === 'installed' && manifest !== null && wantedVariants(entry, options.precisions).every(hasVariants)) {
      return { status: 'already-installed', name, manifest, trustedOnFirstUse: [] };
    }
    // A corrupt install becomes "not installed" until this pull completes; good files are kept.
    await rm(join(folder, MANIFEST_FILE), { force: true });
  }
  await mkdir(folder, { recursive: true });

  const endpoint = options.endpoint ?? DEFAULT_HF_ENDPOINT;
  const context: PullContext = {
    entry,
    modelsDir,
    endpoint,
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
    options: {
      retries: options.retries ?? 3,
      retryDelayMs: options.retryDelayMs ?? 1000,
      idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
      fetchImpl: options.fetchImpl ?? fetch,
    },
    emit,
  };
  emit({ type: 'model-start', name, repo: entry.source.repo, revision: entry.source.revision, fileCount: entry.files.length });
  if (entry.source.revisionNote) emit({ type: 'notice', name, message: `revision "${entry.source.revision}" is ${entry.source.revisionNote}` });

  const files: ManifestFile[] = [];
  try {
    for (const file of entry.files) files.push(await pullFile(context, file));
    for (const wanted of wantedVariants(entry, options.precisions)) files.push(await pullVariant(context, wanted));
  } catch (error) {
    const explained = await explainFailure(error, context);
    // Nothing downloaded (offline from the start): leave no empty folder behind.
    if ((await partialBytesOnDisk(context)) === 0) await rm(folder, { recursive: true, force: true });
    throw explained;
  }

  const manifest: ModelManifest = {
    manifestVersion: 1,
    name,
    task: entry.task,
    description: entry.description,
    ...(entry.sampleRate === undefined ? {} : { sampleRate: entry.sampleRate }),
    licence: { ...entry.licence },
    source: { repo: entry.source.repo, revision: entry.source.revision, url: hubTreeUrl(endpoint, entry.source.repo, entry.source.revision) },
    files,
    pulledAt: (options.now ?? (() => new Date()))().toISOString(),
  };
  await writeManifest(modelsDir, manifest);
  const trustedOnFirstUse = files.filter((file) => file.checksumSource === 'trust-on-first-use').map((file) => file.path);
  return { status: 'pulled', name, manifest, trustedOnFirstUse };
}

/** One ONNX file's variant for one precision, and the names the Hub's exports may give it. */
interface WantedVariant {
  base: string;
  precision: ModelPrecision;
  candidates: string[];
}

function wantedVariants(entry: HubCatalogEntry, precisions: PullOptions['precisions'] = []): WantedVariant[] {
  return precisions.flatMap((precision) =>
    entry.files
      .filter((file) => file.path.endsWith('.onnx'))
      .map((file) => ({ base: file.path, precision, candidates: PRECISION_FILE_SUFFIXES[precision].map((suffix) => variantPath(file.path, suffix)) })),
  );
}

/**
 * The first of the variant's names the repository has. Its checksum comes from the Hub (the
 * catalog lists the full-precision files only); a repository without any of them fails the pull.
 */
async function pullVariant(context: PullContext, wanted: WantedVariant): Promise<ManifestFile> {
  for (const path of wanted.candidates) {
    try {
      return await pullFile(context, { path, sizeBytes: null, sha256: null });
    } catch (error) {
      if (!(error instanceof ModelPullError && error.code === 'not_found')) throw error;
    }
  }
  throw new ModelPullError(
    'not_found',
    `${context.entry.source.repo} publishes no ${wanted.precision} variant of ${wanted.base} (tried ${wanted.candidates.join(', ')}): this model runs fp32 only`,
    false,
  );
}

async function pullFile(context: PullContext, file: CatalogFile): Promise<ManifestFile> {
  const { entry, emit } = context;
  const name = entry.name;
  const label = `${name}/${file.path}`;
  const destination = modelFilePath(context.modelsDir, name, file.path);
  const partialPath = `${destination}${PARTIAL_SUFFIX}`;
  const url = hubFileUrl(context.endpoint, entry.source.repo, entry.source.revision, file.path);

  let expectedSha256 = file.sha256;
  let expectedSizeBytes = file.sizeBytes;
  let checksumSource: ChecksumSource = 'catalog';
  if (expectedSha256 === null) {
    const published = await fetchHubFileInfo(context.options.fetchImpl, url, context.headers, label, context.options.idleTimeoutMs);
    expectedSha256 = published.sha256;
    expectedSizeBytes ??= published.sha256 === null ? null : published.sizeBytes;
    checksumSource = published.sha256 === null ? 'trust-on-first-use' : 'hub';
  }

  const kept = await keepCompletedFile(destination, expectedSizeBytes, expectedSha256);
  if (kept) {
    emit({ type: 'file-kept', name, path: file.path, ...kept, checksumSource });
    return { path: file.path, ...kept, checksumSource };
  }

  await mkdir(dirname(destination), { recursive: true });
  const policy = retry(
    handleWhen((error) => error instanceof ModelPullError && error.retryable && error.code !== 'offline'),
    { maxAttempts: context.options.retries, backoff: new ExponentialBackoff({ initialDelay: context.options.retryDelayMs, maxDelay: 30_000 }) },
  );
  const listener = policy.onRetry((event) => {
    const reason = 'error' in event ? event.error.message : 'unexpected result';
    emit({ type: 'retry', name, path: file.path, attempt: event.attempt, delayMs: Math.round(event.delay), reason });
  });
  let download;
  try {
    download = await policy.execute(() =>
      downloadFile({
        url,
        label,
        headers: context.headers,
        partialPath,
        expectedSizeBytes,
        idleTimeoutMs: context.options.idleTimeoutMs,
        fetchImpl: context.options.fetchImpl,
        onStart: ({ totalBytes, resumedFromBytes }) => emit({ type: 'file-start', name, path: file.path, totalBytes, resumedFromBytes }),
        onProgress: (receivedBytes, totalBytes) => emit({ type: 'file-progress', name, path: file.path, receivedBytes, totalBytes }),
        onNotice: (message) => emit({ type: 'notice', name, message }),
      }),
    );
  } finally {
    listener.dispose();
  }

  if (expectedSha256 !== null && download.sha256 !== expectedSha256) {
    await rm(partialPath, { force: true });
    const whose = checksumSource === 'catalog' ? "the catalog's" : "the Hub's published";
    throw new ModelPullError(
      'checksum_mismatch',
      `checksum mismatch for ${label}: sha256 ${download.sha256}, ${whose} ${expectedSha256}. The download is corrupt or the file ` +
        'changed upstream; the partial file was deleted. Pull again; if it fails the same way the catalog entry is out of date.',
      false,
    );
  }
  await rename(partialPath, destination);
  const recorded: ChecksumSource = expectedSha256 === null ? 'trust-on-first-use' : checksumSource;
  if (recorded === 'trust-on-first-use') {
    emit({
      type: 'notice',
      name,
      message:
        `trust on first use: no published sha256 for ${file.path}; recorded sha256 ${download.sha256} in the manifest, ` +
        `and \`npm run models -- verify ${name}\` checks against it from now on`,
    });
  }
  emit({ type: 'file-done', name, path: file.path, sizeBytes: download.sizeBytes, sha256: download.sha256, checksumSource: recorded });
  return { path: file.path, sizeBytes: download.sizeBytes, sha256: download.sha256, checksumSource: recorded };
}

/**
 * A file already in place (an earlier pull finished it, then failed on a later file) is kept when
 * it matches what is known about it. With no published checksum it is trusted as the earlier
 * pull trusted it: it was only renamed into place after a complete download.
 */
async function keepCompletedFile(
  destination: string,
  expectedSizeBytes: number | null,
  expectedSha256: string | null,
): Promise<{ sizeBytes: number; sha256: string } | null> {
  let sizeBytes: number;
  try {
    sizeBytes = (await stat(destination)).size;
  } catch {
    return null;
  }
  const sha256 = expectedSizeBytes === null || sizeBytes === expectedSizeBytes ? await fileSha256(destination) : null;
  if (sha256 !== null && (expectedSha256 === null || sha256 === expectedSha256)) return { sizeBytes, sha256 };
  await rm(destination, { force: true });
  return null;
}

async function partialBytesOnDisk(context: PullContext): Promise<number> {
  let total = 0;
  for (const file of context.entry.files) {
    const destination = modelFilePath(context.modelsDir, context.entry.name, file.path);
    for (const path of [destination, `${destination}${PARTIAL_SUFFIX}`]) {
      try {
        total += (await stat(path)).size;
      } catch {
        // not started yet
      }
    }
  }
  return total;
}

function formatMegabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** Turns the first failure into the one message a person needs: what failed, what was kept, what to do. */
async function explainFailure(error: unknown, context: PullContext): Promise<unknown> {
  if (!(error instanceof ModelPullError)) return error;
  const name = context.entry.name;
  const host = endpointHost(context.endpoint);
  const keptBytes = await partialBytesOnDisk(context);
  const kept = keptBytes > 0 ? ` The ${formatMegabytes(keptBytes)} already downloaded are kept; the next pull resumes from them.` : '';
  switch (error.code) {
    case 'offline':
      return new ModelPullError(
        'offline',
        `cannot reach ${host} to pull ${name}: ${error.message}. This machine looks offline (or ${host} is blocked). ` +
          `Pull the model on a connected machine with \`npm run models -- pull ${name}\` and copy its folder ` +
          `(MODELS_DIR/${name}) into ${context.modelsDir}, or set HF_ENDPOINT to a reachable mirror.${kept}`,
        true,
        { cause: error },
      );
    case 'interrupted':
    case 'http_error':
      return new ModelPullError(error.code, `${error.message}.${kept} Run \`npm run models -- pull ${name}\` again to resume.`, error.retryable, {
        cause: error,
        ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
      });
    default:
      return error;
  }
}
