import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { MANIFEST_FILE, isSafeRelativePath, isValidModelName, modelFolder } from './model-paths';

/**
 * Where a recorded sha256 came from: the project's catalog, the Hub's published LFS hash for the
 * file, or the file itself on its first download (trust on first use).
 */
export type ChecksumSource = 'catalog' | 'hub' | 'trust-on-first-use';

const SHA256 = /^[0-9a-f]{64}$/;

const manifestSchema = z.object({
  manifestVersion: z.literal(1),
  name: z.string().refine(isValidModelName, 'not a valid model name'),
  task: z.enum(['vad', 'asr', 'tts', 'end-of-turn', 'llm']),
  description: z.string().optional(),
  // Absent for a text model (LLM).
  sampleRate: z.number().int().positive().optional(),
  licence: z.object({ spdx: z.string().min(1), url: z.string().min(1), note: z.string().optional() }),
  source: z.object({ repo: z.string().min(1), revision: z.string().min(1), url: z.string().min(1) }),
  files: z
    .array(
      z.object({
        path: z.string().refine(isSafeRelativePath, 'not a relative path inside the model folder'),
        sizeBytes: z.number().int().nonnegative(),
        sha256: z.string().regex(SHA256, 'not a lowercase hex sha256'),
        checksumSource: z.enum(['catalog', 'hub', 'trust-on-first-use']),
      }),
    )
    .min(1),
  pulledAt: z.string().min(1),
});

/** MODELS_DIR/<name>/manifest.json: what was pulled, from where, and the checksums to verify against. */
export type ModelManifest = z.infer<typeof manifestSchema>;
export type ManifestFile = ModelManifest['files'][number];

export type ManifestReadResult =
  | { state: 'absent' }
  | { state: 'invalid'; problem: string }
  | { state: 'valid'; manifest: ModelManifest };

export async function readManifest(modelsDir: string, name: string): Promise<ManifestReadResult> {
  let text: string;
  try {
    text = await readFile(join(modelFolder(modelsDir, name), MANIFEST_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    return { state: 'invalid', problem: `cannot read ${MANIFEST_FILE}: ${(error as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { state: 'invalid', problem: `${MANIFEST_FILE} is not JSON: ${(error as Error).message}` };
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { state: 'invalid', problem: `${MANIFEST_FILE}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}` };
  }
  if (parsed.data.name !== name) {
    return { state: 'invalid', problem: `${MANIFEST_FILE} names model "${parsed.data.name}" but sits in folder "${name}"` };
  }
  return { state: 'valid', manifest: parsed.data };
}

/**
 * Writes the manifest through a temporary file and a rename, so a crash leaves either no manifest
 * (the model reads as not installed and the next pull resumes) or a complete one.
 */
export async function writeManifest(modelsDir: string, manifest: ModelManifest): Promise<void> {
  const folder = modelFolder(modelsDir, manifest.name);
  const temporary = join(folder, `${MANIFEST_FILE}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify(manifestSchema.parse(manifest), null, 2)}\n`);
    await rename(temporary, join(folder, MANIFEST_FILE));
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
