import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The part of s3rver's API the tests use. */
interface S3rverOptions {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string; configs: string[] }[];
}
interface S3rverNotification {
  Records: { eventName: string; s3: { object: { key: string } } }[];
}
interface S3rver {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  on(event: 'event', listener: (notification: S3rverNotification) => void): unknown;
}
// s3rver ships no type declarations, so it is loaded untyped and given the interface above.
const S3rverServer = createRequire(__filename)('s3rver') as new (options: S3rverOptions) => S3rver;

/** s3rver's defaults; a real server that checks SigV4 signatures against them. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface LocalS3Server {
  endpoint: string;
  bucket: string;
  /** `<eventName> <key>` per stored object, e.g. 'ObjectCreated:Post calls/a.wav' for a multipart upload. */
  notifications: string[];
  close(): Promise<void>;
}

/**
 * A real S3-compatible HTTP server (s3rver) on loopback with one bucket, its objects in a temporary
 * folder removed at close: what the S3 recording store is tested against (never a mock of the SDK).
 */
export async function startLocalS3Server(bucket = 'recordings'): Promise<LocalS3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'switchboard-s3rver-'));
  const server = new S3rverServer({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const notifications: string[] = [];
  server.on('event', (notification) => {
    for (const record of notification.Records) notifications.push(`${record.eventName} ${record.s3.object.key}`);
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    notifications,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
