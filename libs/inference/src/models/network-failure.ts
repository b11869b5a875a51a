import { ModelPullError } from './model-pull.error';

/** Socket-level codes that mean "the host cannot be reached from here", as opposed to an HTTP answer. */
const UNREACHABLE_CODES: Record<string, string> = {
  ENOTFOUND: 'DNS lookup failed',
  EAI_AGAIN: 'DNS lookup failed (temporary)',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  ENETUNREACH: 'network unreachable',
  EHOSTUNREACH: 'host unreachable',
  ENETDOWN: 'network down',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate rejected',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate rejected (a proxy intercepting HTTPS?)',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate rejected (a proxy intercepting HTTPS?)',
};

/**
 * The socket error code behind a failed fetch, if any. Node's fetch wraps it: TypeError('fetch
 * failed') with the system error as `cause`, or an AggregateError there when every address of a
 * host (IPv4 and IPv6) refused.
 */
export function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in UNREACHABLE_CODES) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = networkErrorCode(errors[0]);
      if (inner) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function describeNetworkErrorCode(code: string): string {
  return `${UNREACHABLE_CODES[code] ?? 'network error'} (${code})`;
}

/** Errors writing the partial file: not the network's fault, so not worth retrying as is. */
const FILESYSTEM_CODES = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS', 'EISDIR', 'ENOTDIR', 'EMFILE']);

export interface FailureContext {
  label: string;
  /** connect: no HTTP answer yet; transfer: the body was streaming. */
  stage: 'connect' | 'transfer';
  idleAborted: boolean;
  idleTimeoutMs: number;
  receivedBytes: number;
}

/**
 * A failure before any HTTP answer is "offline" (the host is unreachable); one while the body
 * streams is "interrupted" (the partial file is kept and the next attempt resumes it).
 */
export function classifyTransferFailure(error: unknown, context: FailureContext): ModelPullError {
  if (error instanceof ModelPullError) return error;
  const { label } = context;
  if (context.idleAborted && context.stage === 'connect') {
    return new ModelPullError('offline', `no answer in ${Math.round(context.idleTimeoutMs / 1000)} s`, true, { cause: error });
  }
  if (context.idleAborted) {
    return new ModelPullError('interrupted', `no data for ${label} in ${Math.round(context.idleTimeoutMs / 1000)} s; the connection stalled`, true, {
      cause: error,
    });
  }
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  if (errno !== undefined && FILESYSTEM_CODES.has(errno)) {
    return new ModelPullError('filesystem', `cannot write ${label}: ${(error as Error).message}`, false, { cause: error });
  }
  const code = networkErrorCode(error);
  const reason = code ? describeNetworkErrorCode(code) : error instanceof Error ? error.message : String(error);
  if (context.stage === 'connect') return new ModelPullError('offline', reason, true, { cause: error });
  return new ModelPullError(
    'interrupted',
    `the download of ${label} was interrupted after ${context.receivedBytes} bytes: ${reason}`,
    true,
    { cause: error },
  );
}
