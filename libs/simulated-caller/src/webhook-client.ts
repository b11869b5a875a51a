import { TwilioCallerError } from './twilio-caller.error';
import { SignatureMode, signatureHeaderFor } from './twilio-signature';

export interface SignedFormRequest {
  /** Where the request is actually sent (the local server). */
  localUrl: string;
  /** The URL as configured in Twilio: what the signature covers. */
  publicUrl: string;
  authToken: string;
  params: Readonly<Record<string, string>>;
  signature: SignatureMode;
  timeoutMs: number;
}

export interface SignedFormResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/**
 * POSTs a form the way Twilio's webhook client does. Network failures become SERVER_UNREACHABLE
 * (retryable: the server may still be starting); HTTP statuses are returned, not thrown, because
 * rejecting a bad signature with 403 is a correct answer that tests assert on.
 */
export async function postSignedForm(request: SignedFormRequest): Promise<SignedFormResponse> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
    Accept: '*/*',
    'User-Agent': 'TwilioProxy/1.1',
  };
  const signature = signatureHeaderFor(request.signature, request.authToken, request.publicUrl, request.params);
  if (signature !== undefined) headers['X-Twilio-Signature'] = signature;

  let response: Response;
  try {
    response = await fetch(request.localUrl, {
      method: 'POST',
      headers,
      body: new URLSearchParams(request.params).toString(),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    const timedOut = name === 'TimeoutError' || name === 'AbortError';
    const reason = timedOut ? `no answer within ${request.timeoutMs} ms` : describeNetworkError(error);
    throw new TwilioCallerError(timedOut ? 'TIMEOUT' : 'SERVER_UNREACHABLE', `POST ${request.localUrl} failed: ${reason}`, {
      retryable: true,
      cause: error,
    });
  }
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

/**
 * undici reports "fetch failed" and hides the useful part (ECONNREFUSED, ENOTFOUND) in `cause`.
 * Duck-typed rather than `instanceof Error`: fetch's errors come from Node's own realm, which is
 * not the test runner's.
 */
function describeNetworkError(error: unknown): string {
  const { message, cause } = (error ?? {}) as { message?: unknown; cause?: { code?: unknown; message?: unknown } };
  if (typeof cause?.code === 'string') return typeof cause.message === 'string' ? `${cause.code} (${cause.message})` : cause.code;
  return typeof message === 'string' ? message : String(error);
}
