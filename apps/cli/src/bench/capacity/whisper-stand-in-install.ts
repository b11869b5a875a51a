import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { MODEL_CATALOG, type HubCatalogEntry } from '@switchboard/inference';
import { HubFileServer, type HubFixtureFile, type StandInSize, writeWhisperStandIn } from '@switchboard/testing';
import { runModelsCommand } from '../../models.command';

const WHISPER = MODEL_CATALOG.find((entry): entry is HubCatalogEntry => entry.kind === 'hub' && entry.name === 'whisper-base.en') as HubCatalogEntry;

/**
 * Installs `whisper-base.en` into `modelsDir` exactly as an operator does (`npm run models -- pull
 * whisper-base.en`, through the real command), with stand-in weights of the given size served by a
 * local Hub-like server: the server then loads it as a pulled model. The stand-in's compute is the
 * real model's at 'realistic' size, whatever its weights say.
 */
export async function installWhisperStandIn(modelsDir: string, size: StandInSize): Promise<{ code: number; lines: string[] }> {
  const folder = await mkdtemp(join(tmpdir(), 'switchboard-whisper-stand-in-'));
  try {
    await writeWhisperStandIn(folder, { size });
    const files: HubFixtureFile[] = [];
    for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = relative(folder, join(entry.parentPath, entry.name));
      files.push({ repo: WHISPER.source.repo, revision: WHISPER.source.revision, path, content: await readFile(join(folder, path)), lfs: path.endsWith('.onnx') });
    }
    // The catalog lists it; the recogniser does not read it.
    files.push({ repo: WHISPER.source.repo, revision: WHISPER.source.revision, path: 'tokenizer_config.json', content: Buffer.from('{}\n') });
    const hub = new HubFileServer({ files });
    await hub.start();
    try {
      const lines: string[] = [];
      const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
      const code = await runModelsCommand(['pull', WHISPER.name], { MODELS_DIR: modelsDir, HF_ENDPOINT: hub.url }, io, { retries: 0 });
      return { code, lines };
    } finally {
      await hub.stop();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
