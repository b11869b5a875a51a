import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildStandInModels, STAND_IN_MODEL_NAMES, type StandInModelName, type StandInSize } from '@switchboard/testing';

/**
 * `npm run models:stand-ins -- [--out DIR] [--size small|realistic] [--models whisper,kokoro,piper,smart-turn,llm]`
 * Builds stand-in ONNX models with the real signatures and layouts (no weights downloaded):
 * 'small' for tests, 'realistic' (whisper-base, Kokoro-, Piper-, Smart Turn v3-like sizes, a Qwen2.5-0.5B-shaped KV cache) for
 * GPU benchmarks. Exit codes: 0 built, 2 bad command line, 1 build failed.
 */
export const STAND_IN_USAGE =
  'usage: npm run models:stand-ins -- [--out DIR (default data/stand-in-models)] [--size small|realistic] ' +
  `[--models ${STAND_IN_MODEL_NAMES.join(',')}]`;

export interface StandInCommand {
  outputDir: string;
  size: StandInSize;
  models: StandInModelName[];
}

export function parseStandInCommand(argv: readonly string[]): StandInCommand | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      out: { type: 'string', default: 'data/stand-in-models' },
      size: { type: 'string', default: 'small' },
      models: { type: 'string', default: STAND_IN_MODEL_NAMES.join(',') },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  if (values.size !== 'small' && values.size !== 'realistic') throw new RangeError(`--size must be small or realistic, got ${values.size}`);
  const models = values.models.split(',').map((model) => model.trim()).filter(Boolean);
  const unknown = models.filter((model) => !(STAND_IN_MODEL_NAMES as readonly string[]).includes(model));
  if (unknown.length > 0 || models.length === 0) throw new RangeError(`--models takes ${STAND_IN_MODEL_NAMES.join(', ')}; got ${values.models}`);
  return { outputDir: resolve(values.out), size: values.size, models: models as StandInModelName[] };
}

export async function runStandInCommand(argv: readonly string[], out: (line: string) => void = console.log, err: (line: string) => void = console.error): Promise<number> {
  let command: StandInCommand | 'help';
  try {
    command = parseStandInCommand(argv);
  } catch (error) {
    err(`${error instanceof Error ? error.message : String(error)}\n${STAND_IN_USAGE}`);
    return 2;
  }
  if (command === 'help') {
    out(STAND_IN_USAGE);
    return 0;
  }
  try {
    const started = performance.now();
    await buildStandInModels(command.outputDir, { size: command.size, models: command.models });
    out(`Built ${command.size} stand-in models (${command.models.join(', ')}) in ${Math.round(performance.now() - started)} ms:`);
    for (const file of await listFiles(command.outputDir)) out(`  ${file.path}  ${(file.bytes / 1e6).toFixed(2)} MB`);
    return 0;
  } catch (error) {
    err(`stand-in build failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function listFiles(folder: string): Promise<Array<{ path: string; bytes: number }>> {
  const files: Array<{ path: string; bytes: number }> = [];
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.push({ path, bytes: (await stat(path)).size });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

if (require.main === module) {
  void runStandInCommand(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
