import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
// A dependency of @aws-sdk/client-s3 (same version the client uses), not listed in package.json
// on its own: the client's default handler has no timeouts at all, so a hung store would hang
// every hang-up that hands it a recording.
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ByteRange, RecordingNotFoundError, RecordingReadStream, RecordingStore } from './recording-store';

export interface S3RecordingStoreOptions {
  bucket: string;
  /** For S3-compatible stores (MinIO, Ceph, R2, ...); omitted for AWS S3 itself. */
  endpoint?: string;
  region: string;
  /** Both or neither; neither uses the SDK's default credential chain (environment, IAM role, ...). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `endpoint/bucket/key` instead of `bucket.endpoint/key`; most self-hosted stores need it. */
  forcePathStyle: boolean;
  /** Prepended verbatim to every key (include the trailing '/' for a folder); may be ''. */
  prefix: string;
}

/** The smallest part S3 accepts (all but the last); a part is what one upload request holds in memory. */
const PART_SIZE_BYTES = 5 * 1024 * 1024;
/** Parts in flight at once per recording: upload memory stays about PART_SIZE_BYTES × this. */
const PARTS_IN_FLIGHT = 2;
const CONNECTION_TIMEOUT_MS = 5_000;
/**
 * Sending one request (a whole 5 MiB part) until the response headers arrive. Generous, so that a
 * part still goes through a slow uplink (5 MiB in 60 s is about 0.7 Mbit/s); reading a response body
 * is not bounded by it, so a recording streamed slowly to a browser is not cut off.
 */
const REQUEST_TIMEOUT_MS = 60_000;
const MAX_ATTEMPTS = 3;

/** `bytes START-END/TOTAL`, as S3 returns it for a ranged GET. */
const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+)$/;

/**
 * Recordings in an S3-compatible object store. `put` streams the spool file up (multipart beyond
 * one part, so a long call is never held in memory whole) and deletes the spool file only once the
 * object is complete; on failure the spool file stays for the caller to retry.
 */
export class S3RecordingStore implements RecordingStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(options: S3RecordingStoreOptions) {
    const { accessKeyId, secretAccessKey } = options;
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
      throw new Error('S3 recording store: give both accessKeyId and secretAccessKey, or neither');
    }
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      ...(accessKeyId !== undefined && secretAccessKey !== undefined ? { credentials: { accessKeyId, secretAccessKey } } : {}),
      // Since 3.729 the SDK by default adds CRC32 checksums to uploads (x-amz-checksum-* headers, or
      // for a streamed body an aws-chunked body with a trailing checksum), asks for them on multipart
      // uploads and validates them on responses. Many S3-compatible stores (older MinIO and Ceph,
      // s3rver, some hosted ones) reject those requests or store the chunk framing as the object's
      // bytes: send and check checksums only where an operation requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: MAX_ATTEMPTS,
      requestHandler: new NodeHttpHandler({
        connectionTimeout: CONNECTION_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        // Without it a request past requestTimeout only logs a warning and keeps waiting.
        throwOnRequestTimeout: true,
      }),
    });
  }

  async put(key: string, spoolPath: string, contentType: string): Promise<{ bytes: number }> {
    const { size } = await stat(spoolPath);
    const body = createReadStream(spoolPath);
    try {
      const upload = new Upload({
        client: this.client,
        params: {
          Bucket: this.bucket,
          Key: this.objectKey(key),
          Body: body,
          ContentType: contentType,
          // Lets Upload check that every byte of the file went up (it counts the parts against it).
          ContentLength: size,
        },
        partSize: PART_SIZE_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        // On failure Upload aborts the multipart upload, so no orphaned parts are billed.
        leavePartsOnError: false,
      });
      await upload.done();
    } finally {
      // A failed upload may stop reading midway; close the file either way.
      body.destroy();
    }
    try {
      await unlink(spoolPath);
    } catch (error) {
      // Already gone is what we wanted; anything else the caller should hear about (the object is
      // stored, so a retry re-uploads the same bytes and tries the unlink again).
      if (!isErrnoException(error) || error.code !== 'ENOENT') throw error;
    }
    return { bytes: size };
  }

  async read(key: string, range?: ByteRange): Promise<RecordingReadStream> {
    let output;
    try {
      output = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.objectKey(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
    } catch (error) {
      if (isObjectMissing(error)) throw new RecordingNotFoundError(key);
      throw error;
    }
    const body = output.Body;
    if (!(body instanceof Readable)) {
      // Only a browser runtime of the SDK returns a web stream or Blob; this code runs on Node.
      throw new Error(`S3 recording store: GetObject for ${key} returned no Node.js stream`);
    }
    try {
      return { body, totalBytes: range ? totalFromContentRange(key, range, output.ContentRange) : contentLength(key, output.ContentLength) };
    } catch (error) {
      // Release the connection the unread body holds.
      body.destroy();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a key that does not exist, which is what a repeated delete needs.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  /** Closes the client's pooled connections (at shutdown). */
  destroy(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    return `${this.prefix}${key}`;
  }
}

/**
 * The whole object's size from a ranged GET's `Content-Range`. Also checks the range is the one
 * asked for (S3 shortens an end past the object to its last byte): a store that ignores or widens
 * the Range would otherwise have us serve the wrong bytes under a 206.
 */
function totalFromContentRange(key: string, asked: ByteRange, contentRange: string | undefined): number {
  const match = contentRange === undefined ? null : CONTENT_RANGE.exec(contentRange);
  const [, start, end, total] = match ?? [];
  if (start === undefined || end === undefined || total === undefined) {
    throw new Error(`S3 recording store: ranged GetObject for ${key} returned Content-Range ${contentRange ?? '(none)'}`);
  }
  const totalBytes = Number(total);
  if (Number(start) !== asked.start || Number(end) !== Math.min(asked.end, totalBytes - 1)) {
    throw new Error(
      `S3 recording store: GetObject for ${key} asked bytes ${asked.start}-${asked.end}, got Content-Range ${contentRange}`,
    );
  }
  return totalBytes;
}

function contentLength(key: string, value: number | undefined): number {
  if (value === undefined) throw new Error(`S3 recording store: GetObject for ${key} returned no Content-Length`);
  return value;
}

/**
 * A missing object: NoSuchKey, or a bare 404 (some S3-compatible stores send no error code). A
 * missing bucket is a misconfiguration, not a missing recording, and stays an error.
 */
function isObjectMissing(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  if (error.name === 'NoSuchKey') return true;
  return error.$metadata.httpStatusCode === 404 && error.name !== 'NoSuchBucket';
}

/** Duck-typed: under Jest's VM sandbox Node's own errors fail `instanceof Error`. */
function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return typeof error === 'object' && error !== null && 'code' in error;
}
