import { randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { RecordingNotFoundError } from '../../../libs/recordings/src/recording-store';
import { S3RecordingStore, S3RecordingStoreOptions } from '../../../libs/recordings/src/s3-recording-store';
import { LOCAL_S3_CREDENTIALS, startLocalS3Server, type LocalS3Server } from '../../support/s3-server';

const BUCKET = 'recordings';
const PREFIX = 'calls/';
const CREDENTIALS = LOCAL_S3_CREDENTIALS;
const MIB = 1024 * 1024;
/** More than one 5 MiB part, so put goes through CreateMultipartUpload / UploadPart ×2 / Complete. */
const RECORDING_BYTES = 6 * MIB + 4321;

describe('S3RecordingStore against s3rver', () => {
  let tempDir: string;
  let server: LocalS3Server;
  let endpoint: string;
  let store: S3RecordingStore;
  /** Verifies what the store wrote without going through the store. */
  let inspector: S3Client;
  let notifications: string[] = [];
  const stores: S3RecordingStore[] = [];
  let spoolCount = 0;

  const storeOptions = (overrides: Partial<S3RecordingStoreOptions> = {}): S3RecordingStoreOptions => ({
    bucket: BUCKET,
    endpoint,
    region: 'us-east-1',
    ...CREDENTIALS,
    forcePathStyle: true,
    prefix: PREFIX,
    ...overrides,
  });
  const newStore = (overrides: Partial<S3RecordingStoreOptions> = {}): S3RecordingStore => {
    const created = new S3RecordingStore(storeOptions(overrides));
    stores.push(created);
    return created;
  };
  const spoolFile = async (bytes: Buffer): Promise<string> => {
    spoolCount += 1;
    const path = join(tempDir, 'spool', `recording-${spoolCount}.wav`);
    await writeFile(path, bytes);
    return path;
  };

  beforeAll(async () => {
    tempDir = await mkdtemp(join(tmpdir(), 's3-recording-store-'));
    await mkdir(join(tempDir, 'spool'));
    // s3rver notes each stored object: 'ObjectCreated:Post' for a completed multipart upload, 'ObjectCreated:Put' for a single PutObject.
    server = await startLocalS3Server(BUCKET);
    endpoint = server.endpoint;
    notifications = server.notifications;
    store = newStore();
    inspector = new S3Client({
      endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  });

  afterAll(async () => {
    for (const created of stores) created.destroy();
    inspector?.destroy();
    await server?.close();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  });

  describe('a stored recording', () => {
    const key = 'org-1/call-1.wav';
    const recording = randomBytes(RECORDING_BYTES);

    it('put() uploads the spool file in parts under the prefixed key and removes the spool file', async () => {
      const spoolPath = await spoolFile(recording);

      await expect(store.put(key, spoolPath, 'audio/wav')).resolves.toEqual({ bytes: RECORDING_BYTES });

      await expect(access(spoolPath)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(notifications).toContain(`ObjectCreated:Post ${PREFIX}${key}`);
      const head = await inspector.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}${key}` }));
      expect(head).toMatchObject({ ContentLength: RECORDING_BYTES, ContentType: 'audio/wav' });
    });

    it('read() returns the whole object, byte for byte', async () => {
      const { body, totalBytes } = await store.read(key);
      expect(totalBytes).toBe(RECORDING_BYTES);
      expect((await readAll(body)).equals(recording)).toBe(true);
    });

    it.each([
      ['the start', 0, 1023],
      ['the middle, across the part boundary', 5 * MIB - 100, 5 * MIB + 99],
      ['the last byte', RECORDING_BYTES - 1, RECORDING_BYTES - 1],
    ])('read() of a range at %s returns exactly those bytes and the full size', async (_where, start, end) => {
      const { body, totalBytes } = await store.read(key, { start, end });
      expect(totalBytes).toBe(RECORDING_BYTES);
      const bytes = await readAll(body);
      expect(bytes.length).toBe(end - start + 1);
      expect(bytes.equals(recording.subarray(start, end + 1))).toBe(true);
    });

    it('read() of a range ending past the object returns up to its last byte', async () => {
      const start = RECORDING_BYTES - 10;
      const { body, totalBytes } = await store.read(key, { start, end: RECORDING_BYTES + 1000 });
      expect(totalBytes).toBe(RECORDING_BYTES);
      expect((await readAll(body)).equals(recording.subarray(start))).toBe(true);
    });

    it('delete() removes it, and deleting it again is not an error', async () => {
      await expect(store.delete(key)).resolves.toBeUndefined();
      await expect(store.read(key)).rejects.toBeInstanceOf(RecordingNotFoundError);
      await expect(store.read(key, { start: 0, end: 9 })).rejects.toBeInstanceOf(RecordingNotFoundError);
      await expect(store.delete(key)).resolves.toBeUndefined();
    });
  });

  it('put() of a small recording is one PutObject; an empty prefix leaves the key as given', async () => {
    const unprefixed = newStore({ prefix: '' });
    const key = 'org-1/short-call.wav';
    const recording = randomBytes(44 + 1600);
    const spoolPath = await spoolFile(recording);

    await expect(unprefixed.put(key, spoolPath, 'audio/wav')).resolves.toEqual({ bytes: recording.length });

    await expect(access(spoolPath)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(notifications).toContain(`ObjectCreated:Put ${key}`);
    const { body, totalBytes } = await unprefixed.read(key);
    expect(totalBytes).toBe(recording.length);
    expect((await readAll(body)).equals(recording)).toBe(true);
    await unprefixed.delete(key);
  });

  it('read() of a key that was never stored rejects with RecordingNotFoundError', async () => {
    const error: unknown = await store.read('org-1/never-recorded.wav').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordingNotFoundError);
    expect(error).toMatchObject({ key: 'org-1/never-recorded.wav', retryable: false });
  });

  it('read() from a bucket that does not exist is an error, not a missing recording', async () => {
    const error: unknown = await newStore({ bucket: 'no-such-bucket' }).read('org-1/call-1.wav').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(RecordingNotFoundError);
    expect(error).toMatchObject({ name: 'NoSuchBucket' });
  });

  it('put() whose multipart upload fails (no such bucket) rejects and keeps the spool file', async () => {
    const spoolPath = await spoolFile(randomBytes(RECORDING_BYTES));
    await expect(newStore({ bucket: 'no-such-bucket' }).put('org-1/call-2.wav', spoolPath, 'audio/wav')).rejects.toMatchObject({
      name: 'NoSuchBucket',
    });
    await expect(access(spoolPath)).resolves.toBeUndefined();
  });

  it('put() to a server that is not running rejects and keeps the spool file', async () => {
    const spoolPath = await spoolFile(randomBytes(4096));
    const unreachable = newStore({ endpoint: `http://127.0.0.1:${await closedPort()}` });
    // Matched on the message: under Jest's VM sandbox Node's socket error fails the SDK's
    // `instanceof Error`, so the SDK rethrows it wrapped ("AWS SDK error wrapper for Error: connect
    // ECONNREFUSED ...") without its `code`; outside Jest it is the socket error itself.
    await expect(unreachable.put('org-1/call-3.wav', spoolPath, 'audio/wav')).rejects.toThrow(/ECONNREFUSED/);
    await expect(access(spoolPath)).resolves.toBeUndefined();
  });
});

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** A port nothing listens on: bound once to get it from the OS, then released. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => listener.close((error) => (error ? reject(error) : resolve())));
  return port;
}
