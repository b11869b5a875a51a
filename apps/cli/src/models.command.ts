import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CatalogEntry,
  ModelPullError,
  ModelRegistry,
  describeModelFeatures,
  pullModel,
} from '@switchboard/inference';
import { formatModelTable } from './models-list';
import { MODELS_USAGE, type ModelsCommand, type ModelsSettings, ModelsUsageError, parseModelsCommand } from './models-options';
import { createPullProgress, formatBytes } from './models-progress';

/**
 * `npm run models -- list | pull <name> [--force] | verify <name> | remove <name>`.
 * Exit codes: 0 done, 1 failed (offline, checksum mismatch, corrupt model), 2 bad command line.
 */

export interface ModelsCommandOutput {
  out(line: string): void;
  err(line: string): void;
  /** Where the live progress bar is drawn when it is a terminal; plain lines otherwise. */
  progressStream?: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface ModelsCommandDependencies {
  /** Tests pass their own catalog; the real one otherwise. */
  catalog?: readonly CatalogEntry[];
  /** Pull tuning, e.g. faster retries in tests. */
  retries?: number;
  retryDelayMs?: number;
}

const consoleOutput: ModelsCommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  progressStream: process.stderr,
};

export async function runModelsCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: ModelsCommandOutput = consoleOutput,
  dependencies: ModelsCommandDependencies = {},
): Promise<number> {
  let command: ModelsCommand;
  let settings: ModelsSettings;
  try {
    ({ command, settings } = parseModelsCommand(argv, env));
  } catch (error) {
    if (!(error instanceof ModelsUsageError)) throw error;
    io.err(`error: ${error.message}\n\n${MODELS_USAGE}`);
    return 2;
  }
  const registry = new ModelRegistry({ modelsDir: settings.modelsDir, ...(dependencies.catalog ? { catalog: dependencies.catalog } : {}) });

  switch (command.kind) {
    case 'help':
      io.out(MODELS_USAGE);
      return 0;
    case 'list':
      return list(registry, io);
    case 'pull':
      return pull(registry, command.name, { force: command.force, precisions: command.precisions }, settings, io, dependencies);
    case 'verify':
      return verify(registry, command.name, io);
    case 'remove':
      return remove(registry, command.name, io);
  }
}

async function list(registry: ModelRegistry, io: ModelsCommandOutput): Promise<number> {
  io.out(`Models folder: ${registry.modelsDir}`);
  for (const line of formatModelTable(await registry.status())) io.out(line);
  io.out('');
  for (const line of await describeModelFeatures(registry)) io.out(line);
  return 0;
}

async function pull(
  registry: ModelRegistry,
  name: string,
  { force, precisions }: { force: boolean; precisions: Array<'fp16' | 'int8'> },
  settings: ModelsSettings,
  io: ModelsCommandOutput,
  dependencies: ModelsCommandDependencies,
): Promise<number> {
  if (!registry.catalogEntry(name)) {
    io.err(`error: unknown model "${name}"; the catalog has: ${registry.catalog.map((entry) => entry.name).join(', ')}`);
    return 2;
  }
  const progress = createPullProgress({ line: io.out, ...(io.progressStream ? { stream: io.progressStream } : {}) });
  try {
    const result = await pullModel(registry, name, {
      force,
      precisions,
      endpoint: settings.endpoint,
      ...(settings.token ? { token: settings.token } : {}),
      ...(dependencies.retries === undefined ? {} : { retries: dependencies.retries }),
      ...(dependencies.retryDelayMs === undefined ? {} : { retryDelayMs: dependencies.retryDelayMs }),
      onEvent: progress.onEvent,
    });
    progress.stop();
    if (result.status === 'builtin') {
      io.out(`${name} is built in (npm package ${result.npmPackage}): nothing to pull.`);
      return 0;
    }
    const totalBytes = result.manifest.files.reduce((sum, file) => sum + file.sizeBytes, 0);
    if (result.status === 'already-installed') {
      io.out(`${name} is already installed in ${registry.modelsDir} (${formatBytes(totalBytes)}). Use --force to download it again, or verify to re-check its checksums.`);
      return 0;
    }
    io.out(`${name} installed in ${registry.modelsDir} (${result.manifest.files.length} files, ${formatBytes(totalBytes)}); licence ${result.manifest.licence.spdx}.`);
    if (result.trustedOnFirstUse.length > 0) {
      io.out(`Trust on first use: ${result.trustedOnFirstUse.join(', ')} had no published sha256; the hashes recorded now are what verify checks from here on.`);
    }
    return 0;
  } catch (error) {
    progress.stop();
    if (!(error instanceof ModelPullError)) throw error;
    io.err(`error: ${error.message}`);
    return 1;
  }
}

async function verify(registry: ModelRegistry, name: string, io: ModelsCommandOutput): Promise<number> {
  const result = await registry.verify(name);
  if (result.problem) {
    io.err(`error: ${name}: ${result.problem}`);
    return 1;
  }
  for (const file of result.files) io.out(`  ${file.path}: ${file.ok ? 'ok' : `FAILED (${file.problem ?? 'bad'})`}`);
  if (!result.ok) {
    const entry = registry.catalogEntry(name);
    const fix = entry?.kind === 'builtin' ? 'reinstall the npm packages with `npm ci`' : `run \`npm run models -- pull ${name} --force\``;
    io.err(`error: ${name} is corrupt: ${fix}`);
    return 1;
  }
  io.out(`${name}: every file matches its sha256.`);
  return 0;
}

async function remove(registry: ModelRegistry, name: string, io: ModelsCommandOutput): Promise<number> {
  const status = await registry.statusOf(name);
  if (status?.kind === 'builtin') {
    io.err(`error: ${name} is built in (npm package ${status.entry?.kind === 'builtin' ? status.entry.source.npmPackage : ''}); it cannot be removed here`);
    return 1;
  }
  if (status === undefined || (status.state === 'missing' && !status.partialBytes)) {
    io.out(`${name} is not in ${registry.modelsDir}: nothing to remove.`);
    return 0;
  }
  await rm(join(registry.modelsDir, name), { recursive: true, force: true });
  io.out(`Removed ${name} from ${registry.modelsDir}.`);
  return 0;
}

if (require.main === module) {
  runModelsCommand(process.argv.slice(2), process.env).then(
    (exitCode) => (process.exitCode = exitCode),
    (error: unknown) => {
      process.stderr.write(`unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
