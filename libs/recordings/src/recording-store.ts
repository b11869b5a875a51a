import type { Readable } from 'node:stream';

/** An inclusive byte range of a stored recording (HTTP Range semantics). */
export interface ByteRange {
  start: number;
  end: number;
}

/** A stored recording opened for reading. */
export interface RecordingReadStream {
  body: Readable;
  /** The whole object's size, whatever range was asked. */
  totalBytes: number;
}

/**
 * Where finished call recordings live. A recording is written while the call runs into a spool
 * file on local disk (see RecordingSpoolFile: bounded memory, nothing held per call beyond a
 * second of audio); at hang-up the finished file is handed to the store with `put`, which moves it
 * into place (local disk) or uploads it (S3-compatible object store) and removes the spool file.
 *
 * Keys are chosen by the server (`<organizationId>/<callId>.wav`), never by a tenant.
 */
export interface RecordingStore {
  /** 'local' | 's3': stored with each recording so a later change of store still finds old ones. */
  readonly kind: 'local' | 's3';
  /** Takes ownership of the finished spool file at `spoolPath`: stored under `key`, spool removed. */
  put(key: string, spoolPath: string, contentType: string): Promise<{ bytes: number }>;
  /** Opens the object (or the inclusive range of it); rejects with RecordingNotFoundError when missing. */
  read(key: string, range?: ByteRange): Promise<RecordingReadStream>;
  /** Removes the object; a missing object is not an error (deletes are retried and may repeat). */
  delete(key: string): Promise<void>;
}

export class RecordingNotFoundError extends Error {
  readonly retryable = false;
  constructor(readonly key: string) {
    super(`recording object ${key} does not exist in the store`);
    this.name = 'RecordingNotFoundError';
  }
}
