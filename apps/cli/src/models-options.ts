import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_HF_ENDPOINT, isValidModelName } from '@switchboard/inference';

export type ModelsCommand =
  | { kind: 'help' }
  | { kind: 'list' }
  | { kind: 'pull'; name: string; force: boolean; precisions: Array<'fp16' | 'int8'> }
  | { kind: 'verify'; name: string }
  | { kind: 'remove'; name: string };

export interface ModelsSettings {
  /** MODELS_DIR (or --models-dir), absolute. */
  modelsDir: string;
  /** HF_ENDPOINT: the Hub or a mirror. */
  endpoint: string;
  /** HF_TOKEN, for gated repositories; never printed. */
  token: string | undefined;
}

/** Bad command line: printed with the usage text, exit code 2. */
export class ModelsUsageError extends Error {
  override readonly name = 'ModelsUsageError';
  readonly retryable = false;
}

export const MODELS_USAGE = `Usage: npm run models -- <command> [options]

Manages the local models folder (MODELS_DIR, default ./models): one folder per model with its
manifest.json (files, sha256, licence, source). The server starts without the optional models and
logs which features are off and the command that turns each on.

  list                  every model the engines support: state, size, licence; then the features
  pull <name>           download from Hugging Face (progress, resumes, verifies sha256)
    --force             download every file again
    --precision <list>  also the fp16 and/or int8 variants of its ONNX files (comma-separated), for
                        INFERENCE_MODEL_PRECISION: fp16 runs on a GPU, int8 on CPU
  verify <name>         re-hash the files and compare with the manifest
  remove <name>         delete the model's folder
  --models-dir <dir>    instead of MODELS_DIR
  --help                this text

Environment: MODELS_DIR, HF_ENDPOINT (a mirror; default ${DEFAULT_HF_ENDPOINT}), HF_TOKEN (gated models).
Offline machine: pull on a connected one and copy MODELS_DIR/<name> across.`;

export function parseModelsCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string = process.cwd(),
): { command: ModelsCommand; settings: ModelsSettings } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        force: { type: 'boolean' },
        precision: { type: 'string' },
        'models-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new ModelsUsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const settings = resolveSettings(values['models-dir'], env, cwd);
  if (values.help || positionals[0] === 'help') return { command: { kind: 'help' }, settings };

  const [verb, name, ...rest] = positionals;
  if (verb === undefined) throw new ModelsUsageError('a command is required');
  if (rest.length > 0) throw new ModelsUsageError(`unexpected arguments: ${rest.join(' ')}`);
  if (values.force && verb !== 'pull') throw new ModelsUsageError('--force only applies to pull');
  if (values.precision !== undefined && verb !== 'pull') throw new ModelsUsageError('--precision only applies to pull');
  switch (verb) {
    case 'list':
      if (name !== undefined) throw new ModelsUsageError(`list takes no model name, got "${name}"`);
      return { command: { kind: 'list' }, settings };
    case 'pull':
      return { command: { kind: 'pull', name: modelName(name, verb), force: values.force ?? false, precisions: precisionsOf(values.precision) }, settings };
    case 'verify':
    case 'remove':
      return { command: { kind: verb, name: modelName(name, verb) }, settings };
    default:
      throw new ModelsUsageError(`unknown command "${verb}"`);
  }
}

function precisionsOf(text: string | undefined): Array<'fp16' | 'int8'> {
  if (text === undefined) return [];
  const precisions = [...new Set(text.split(',').map((part) => part.trim().toLowerCase()))];
  for (const precision of precisions) {
    if (precision !== 'fp16' && precision !== 'int8') throw new ModelsUsageError(`--precision takes fp16 and/or int8 (the fp32 files are always pulled), got "${precision}"`);
  }
  return precisions as Array<'fp16' | 'int8'>;
}

function modelName(name: string | undefined, verb: string): string {
  if (name === undefined) throw new ModelsUsageError(`${verb} needs a model name (see \`npm run models -- list\`)`);
  if (!isValidModelName(name)) throw new ModelsUsageError(`"${name}" is not a valid model name`);
  return name;
}

function resolveSettings(modelsDirFlag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): ModelsSettings {
  const endpoint = env['HF_ENDPOINT'] || DEFAULT_HF_ENDPOINT;
  if (!/^https?:\/\/[^/\s]+/i.test(endpoint) || !URL.canParse(endpoint)) {
    throw new ModelsUsageError(`HF_ENDPOINT must be an absolute http(s) URL, got "${endpoint}"`);
  }
  return {
    modelsDir: resolve(cwd, modelsDirFlag ?? (env['MODELS_DIR'] || 'models')),
    endpoint,
    token: env['HF_TOKEN'] || undefined,
  };
}
