import { isAbsolute, join, normalize, sep } from 'node:path';

/** Model names become folder names under MODELS_DIR: no separators, no leading dot. */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isValidModelName(name: string): boolean {
  return MODEL_NAME.test(name) && !name.includes('..');
}

/**
 * True for a relative POSIX path that stays inside its folder. Manifests are files a person may
 * copy in from another machine, so their paths are checked before anything is joined to them.
 */
export function isSafeRelativePath(path: string): boolean {
  if (path.length === 0 || path.includes('\\') || path.includes('\0') || isAbsolute(path)) return false;
  return path.split('/').every((segment) => segment.length > 0 && segment !== '.' && segment !== '..');
}

/** MODELS_DIR/<name>, after checking the name cannot escape MODELS_DIR. */
export function modelFolder(modelsDir: string, name: string): string {
  if (!isValidModelName(name)) throw new Error(`invalid model name "${name}"`);
  return join(modelsDir, name);
}

/** MODELS_DIR/<name>/<file>, after checking the file path cannot escape the model's folder. */
export function modelFilePath(modelsDir: string, name: string, file: string): string {
  if (!isSafeRelativePath(file)) throw new Error(`invalid file path "${file}" for model ${name}`);
  const folder = modelFolder(modelsDir, name);
  const full = normalize(join(folder, ...file.split('/')));
  if (!full.startsWith(folder + sep)) throw new Error(`file path "${file}" escapes the folder of model ${name}`);
  return full;
}

export const MANIFEST_FILE = 'manifest.json';
/** Suffix of a download in progress; kept on failure so the next pull resumes it. */
export const PARTIAL_SUFFIX = '.partial';
