import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { WAV_HEADER_BYTES, wavHeader } from '@switchboard/audio';

/**
 * A PCM16 WAV file written as the call runs: a header for zero bytes first, blocks appended in
 * order, and the header rewritten with the real sizes at the end. Writes are queued on one file
 * handle (never two in flight, so blocks land in order) and each block is copied before the call
 * returns, because the recorder reuses its block buffer.
 *
 * A write error does not stop the call: it is kept, later blocks are skipped, and `close()` rejects
 * with it, so the recording is marked failed rather than stored truncated without a word.
 */
export class RecordingSpoolFile {
  private handle: FileHandle | undefined;
  private chain: Promise<void>;
  private dataBytes = 0;
  private error: Error | undefined;

  private constructor(
    readonly path: string,
    private readonly format: { sampleRate: number; channelCount: number },
  ) {
    this.chain = this.start();
  }

  /** Creates the file (and its folder); the header is written before the first block. */
  static create(path: string, format: { sampleRate: number; channelCount: number }): RecordingSpoolFile {
    return new RecordingSpoolFile(path, format);
  }

  /** Bytes of audio queued so far (the data chunk's size once everything is written). */
  get audioBytes(): number {
    return this.dataBytes;
  }

  append(samples: Int16Array): void {
    if (this.error || samples.length === 0) return;
    // Little-endian PCM16 is the machine's own byte order on every platform Node runs on here.
    const bytes = Buffer.from(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
    const position = WAV_HEADER_BYTES + this.dataBytes;
    this.dataBytes += bytes.length;
    this.enqueue(async (handle) => {
      await handle.write(bytes, 0, bytes.length, position);
    });
  }

  /** Rewrites the header with the final sizes and closes the file; rejects with the first write error. */
  async close(): Promise<{ bytes: number }> {
    const dataBytes = this.dataBytes;
    this.enqueue(async (handle) => {
      await handle.write(wavHeader({ ...this.format, dataBytes }), 0, WAV_HEADER_BYTES, 0);
    });
    await this.chain;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    if (this.error) throw this.error;
    return { bytes: WAV_HEADER_BYTES + dataBytes };
  }

  /**
   * Makes a spool file left by a process that stopped mid-call playable: its header still says 0
   * bytes, so the data size is read off the file (whole sample frames only). Returns the file's
   * size, or undefined when there is no such file.
   */
  static async repairHeader(path: string, format: { sampleRate: number; channelCount: number }): Promise<number | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      const frameBytes = 2 * format.channelCount;
      const dataBytes = Math.max(0, Math.floor((size - WAV_HEADER_BYTES) / frameBytes) * frameBytes);
      await handle.truncate(WAV_HEADER_BYTES + dataBytes);
      await handle.write(wavHeader({ ...format, dataBytes }), 0, WAV_HEADER_BYTES, 0);
      return WAV_HEADER_BYTES + dataBytes;
    } finally {
      await handle.close();
    }
  }

  private async start(): Promise<void> {
    try {
      await mkdir(dirname(this.path), { recursive: true });
      this.handle = await open(this.path, 'w', 0o600);
      await this.handle.write(wavHeader({ ...this.format, dataBytes: 0 }), 0, WAV_HEADER_BYTES, 0);
    } catch (error) {
      this.error = error instanceof Error ? error : new Error(String(error));
    }
  }

  private enqueue(step: (handle: FileHandle) => Promise<void>): void {
    this.chain = this.chain.then(async () => {
      if (this.error || !this.handle) return;
      try {
        await step(this.handle);
      } catch (error) {
        this.error = error instanceof Error ? error : new Error(String(error));
      }
    });
  }
}
