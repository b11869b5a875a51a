import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** sha256 of a whole file, streamed (model files run to hundreds of MB). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
