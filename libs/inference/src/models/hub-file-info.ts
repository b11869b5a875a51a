import { classifyTransferFailure } from './network-failure';

export interface HubFileInfo {
  /** The Hub's published sha256 of an LFS/Xet file, or null (small files stored in git have none). */
  sha256: string | null;
  sizeBytes: number | null;
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Asks the Hub what it publishes about a file without downloading it. For a large (LFS/Xet) file the
 * resolve URL answers with a redirect carrying `X-Linked-Etag` (the file's sha256) and
 * `X-Linked-Size`, so the download can be checked against the Hub's own record instead of being
 * trusted on first use. The redirect is not followed: its target is a signed CDN URL.
 */
export async function fetchHubFileInfo(
  fetchImpl: typeof fetch,
  url: string,
  headers: Record<string, string>,
  label: string,
  timeoutMs: number,
): Promise<HubFileInfo> {
  let response: Response;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    response = await fetchImpl(url, { method: 'HEAD', redirect: 'manual', headers, signal: timeout });
  } catch (error) {
    throw classifyTransferFailure(error, { label, stage: 'connect', idleAborted: timeout.aborted, idleTimeoutMs: timeoutMs, receivedBytes: 0 });
  }
  await response.body?.cancel();
  const etag = response.headers.get('x-linked-etag')?.replace(/^W\//, '').replace(/"/g, '').trim().toLowerCase() ?? '';
  const size = response.headers.get('x-linked-size') ?? '';
  return { sha256: SHA256.test(etag) ? etag : null, sizeBytes: /^\d+$/.test(size) ? Number(size) : null };
}
