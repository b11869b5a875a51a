import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ModelPullError } from './model-pull.error';
import { classifyTransferFailure } from './network-failure';

export interface FileDownloadRequest {
  url: string;
  /** Shown in messages instead of the URL (which may be long): "whisper-base.en/onnx/encoder_model.onnx". */
  label: string;
  /** Extra request headers (Authorization). */
  headers: Record<string, string>;
  /** The download streams into this file; it is kept on failure so the next attempt resumes it. */
  partialPath: string;
  /** Known exact size, or null. */
  expectedSizeBytes: number | null;
  /** Abort when no byte arrives for this long (a stalled connection), in ms. */
  idleTimeoutMs: number;
  fetchImpl: typeof fetch;
  onStart(info: { totalBytes: number | null; resumedFromBytes: number }): void;
  onProgress(receivedBytes: number, totalBytes: number | null): void;
  onNotice(message: string): void;
}

export interface FileDownloadResult {
  sizeBytes: number;
  sha256: string;
  resumedFromBytes: number;
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** `Content-Range: bytes 100-999/1000` -> { start: 100, total: 1000 } (total null for `*`). */
function parseContentRange(header: string | null): { start: number; total: number | null } | null {
  const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header?.trim() ?? '');
  if (!match?.[1] || !match[2]) return null;
  return { start: Number(match[1]), total: match[2] === '*' ? null : Number(match[2]) };
}

// `Content-Range: bytes */1000` (the answer to an unsatisfiable Range) -> 1000.
function parseUnsatisfiedRange(header: string | null): number | null {
  const match = /^bytes \*\/(\d+)$/.exec(header?.trim() ?? '');
  return match?.[1] ? Number(match[1]) : null;
}

function contentLength(response: Response): number | null {
  const header = response.headers.get('content-length');
  return header !== null && /^\d+$/.test(header) ? Number(header) : null;
}

function httpError(label: string, response: Response, authorised: boolean): ModelPullError {
  const status = response.status;
  if (status === 401 || status === 403) {
    return new ModelPullError(
      'unauthorized',
      authorised
        ? `the Hub refused ${label} (HTTP ${status}): HF_TOKEN has no access to this repository (gated model? accept its terms on the Hub first)`
        : `the Hub refused ${label} (HTTP ${status}): the repository needs a token; set HF_TOKEN to a Hugging Face access token`,
      false,
      { httpStatus: status },
    );
  }
  if (status === 404) {
    return new ModelPullError('not_found', `${label} was not found on the Hub (HTTP 404): the catalog entry names a file or revision that does not exist`, false, {
      httpStatus: status,
    });
  }
  const retryable = status === 408 || status === 429 || status >= 500;
  return new ModelPullError('http_error', `the Hub answered HTTP ${status} for ${label}`, retryable, { httpStatus: status });
}

/**
 * Downloads one file into `partialPath`, resuming what is already there with a Range request.
 * Handles a 206 (append), a 200 from a server that ignores Range (start over), and a 416 for a
 * partial that is already complete. Returns the size and sha256 of the whole file; checking them
 * and moving the file into place is the caller's job.
 */
export async function downloadFile(request: FileDownloadRequest, restartedOnce = false): Promise<FileDownloadResult> {
  const { partialPath, label } = request;
  await mkdir(dirname(partialPath), { recursive: true });
  let existingBytes = await fileSize(partialPath);
  if (request.expectedSizeBytes !== null && existingBytes > request.expectedSizeBytes) {
    await rm(partialPath, { force: true });
    existingBytes = 0;
  }

  const headers: Record<string, string> = { ...request.headers };
  if (existingBytes > 0) headers['range'] = `bytes=${existingBytes}-`;
  const idle = new AbortController();
  let idleTimer = setTimeout(() => idle.abort(), request.idleTimeoutMs);
  const touch = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => idle.abort(), request.idleTimeoutMs);
  };

  try {
    let response: Response;
    try {
      response = await request.fetchImpl(request.url, { headers, signal: idle.signal });
    } catch (error) {
      throw classifyTransferFailure(error, { label, stage: 'connect', idleAborted: idle.signal.aborted, idleTimeoutMs: request.idleTimeoutMs, receivedBytes: 0 });
    }
    touch();

    if (response.status === 416 && existingBytes > 0) {
      await response.body?.cancel();
      const total = parseUnsatisfiedRange(response.headers.get('content-range'));
      if (total === existingBytes || (total === null && request.expectedSizeBytes === existingBytes)) {
        request.onStart({ totalBytes: existingBytes, resumedFromBytes: existingBytes });
        request.onProgress(existingBytes, existingBytes);
        return await hashComplete(partialPath, existingBytes);
      }
      if (restartedOnce) throw new ModelPullError('http_error', `the Hub rejected resuming ${label} (HTTP 416)`, true, { httpStatus: 416 });
      request.onNotice(`${label}: the server cannot resume this partial download; starting the file again`);
      await rm(partialPath, { force: true });
      return await downloadFile(request, true);
    }
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw httpError(label, response, 'authorization' in headers);
    }

    let append = false;
    let totalBytes = contentLength(response);
    if (response.status === 206) {
      const range = parseContentRange(response.headers.get('content-range'));
      if (!range || range.start !== existingBytes) {
        await response.body?.cancel();
        if (restartedOnce) throw new ModelPullError('http_error', `the Hub answered a resume of ${label} with the wrong range`, true);
        request.onNotice(`${label}: the server answered the resume with a different range; starting the file again`);
        await rm(partialPath, { force: true });
        return await downloadFile(request, true);
      }
      append = true;
      totalBytes = range.total ?? (totalBytes === null ? null : existingBytes + totalBytes);
    } else if (existingBytes > 0) {
      request.onNotice(`${label}: the server ignored the resume request (HTTP 200); downloading the file from the start`);
    }
    const resumedFromBytes = append ? existingBytes : 0;

    if (request.expectedSizeBytes !== null && totalBytes !== null && totalBytes !== request.expectedSizeBytes) {
      await response.body?.cancel();
      throw new ModelPullError(
        'size_mismatch',
        `the Hub serves ${totalBytes} bytes for ${label} but ${request.expectedSizeBytes} were expected: the catalog entry is out of date or the file was replaced`,
        false,
      );
    }

    const hash = createHash('sha256');
    if (append) {
      for await (const chunk of createReadStream(partialPath)) hash.update(chunk as Buffer);
      touch(); // hashing a large partial file is not the connection stalling
    }
    let receivedBytes = resumedFromBytes;
    request.onStart({ totalBytes, resumedFromBytes });
    // Each chunk is written (awaited) before the next is read, so after any failure the partial file
    // holds exactly the bytes counted and hashed: the resume offset is never ahead of the disk.
    const handle = await open(partialPath, append ? 'a' : 'w');
    try {
      if (response.body) {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          touch();
          await handle.write(chunk);
          hash.update(chunk);
          receivedBytes += chunk.length;
          request.onProgress(receivedBytes, totalBytes);
        }
      }
    } catch (error) {
      throw classifyTransferFailure(error, { label, stage: 'transfer', idleAborted: idle.signal.aborted, idleTimeoutMs: request.idleTimeoutMs, receivedBytes });
    } finally {
      await handle.close();
    }

    if (totalBytes !== null && receivedBytes !== totalBytes) {
      throw new ModelPullError(
        'interrupted',
        `the download of ${label} stopped after ${receivedBytes} of ${totalBytes} bytes`,
        true,
      );
    }
    if (request.expectedSizeBytes !== null && receivedBytes !== request.expectedSizeBytes) {
      await rm(partialPath, { force: true });
      throw new ModelPullError('size_mismatch', `${label} is ${receivedBytes} bytes but ${request.expectedSizeBytes} were expected`, false);
    }
    return { sizeBytes: receivedBytes, sha256: hash.digest('hex'), resumedFromBytes };
  } finally {
    clearTimeout(idleTimer);
  }
}

async function hashComplete(path: string, sizeBytes: number): Promise<FileDownloadResult> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { sizeBytes, sha256: hash.digest('hex'), resumedFromBytes: sizeBytes };
}
