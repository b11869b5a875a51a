import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { RecordingNotFoundError, type ByteRange, type RecordingReadStream, type RecordingStore } from './recording-store';

/**
 * Recordings as files under one folder (`DATA_DIR/recordings` by default), one per call at
 * `<organizationId>/<callId>.wav`. The spool folder sits inside the same root, so `put` is a
 * rename on the same file system; a copy is the fallback when an operator mounts them apart.
 */
export class LocalRecordingStore implements RecordingStore {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async put(key: string, spoolPath: string): Promise<{ bytes: number }> {
    const target = this.pathOf(key);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    try {
      await rename(spoolPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(spoolPath, target);
      await unlink(spoolPath);
    }
    return { bytes: (await stat(target)).size };
  }

  async read(key: string, range?: ByteRange): Promise<RecordingReadStream> {
    const path = this.pathOf(key);
    let totalBytes: number;
    try {
      totalBytes = (await stat(path)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new RecordingNotFoundError(key);
      throw error;
    }
    const body = createReadStream(path, range ? { start: range.start, end: range.end } : {});
    return { body, totalBytes };
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /** Keys are made by the server, but a key that would leave the root is refused all the same. */
  private pathOf(key: string): string {
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new RangeError(`recording key ${JSON.stringify(key)} leaves the store's folder`);
    return path;
  }
}
