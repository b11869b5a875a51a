import { EngineError } from '../contracts';
import { engineErrorFromResponse, engineErrorFromThrown } from './http-error-mapping';
import { RemoteAbortReason, remoteAbortReasonOf } from './remote-abort';
import type { RemoteOperation } from './remote-operation';
import type { RemoteTimeouts } from './remote-policy-options';
import type { MultipartBody } from './multipart-body';
import type { RemoteFetch, RemoteResponse } from './remote-http-client';

/** Error bodies are read only this far: enough for the server's message, never a runaway page. */
const ERROR_BODY_MAX_BYTES = 16 * 1024;

export interface RemoteAttemptContext {
  engine: string;
  apiKey: string | undefined;
  timeouts: RemoteTimeouts;
  /** Extra headers every request carries (e.g. OpenAI-Organization); never logged. */
  headers: Record<string, string>;
  fetch: RemoteFetch;
  /** Bytes read from one response at most, a stream counted in total. */
  maxResponseBytes: number;
}

/**
 * One HTTP attempt with its own deadlines: response headers within connectTimeoutMs, first output
 * within firstByteTimeoutMs, and no gap longer than idleTimeoutMs between body chunks. The signal
 * also follows the operation's (caller cancel, total deadline). Every timer aborts the request
 * with a RemoteAbortReason, so `failure()` can tell a stalled server from a cancelled caller.
 */
export class RemoteAttempt {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly connectTimer: NodeJS.Timeout;
  private firstByteTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly onOperationAbort = () => this.controller.abort(this.operation.signal.reason);
  /**
   * The attempt's final outcome as the circuit breaker sees it: settled when the whole response
   * was consumed (dispose) or failed after its first output (reportLateFailure), not merely when
   * the first output arrived, so a stream that dies halfway counts as the failure it is.
   */
  readonly completion: Promise<void>;
  private settleCompletion!: (failure?: EngineError) => void;

  constructor(
    private readonly operation: RemoteOperation,
    private readonly context: RemoteAttemptContext,
  ) {
    this.signal = this.controller.signal;
    this.completion = new Promise<void>((resolve, reject) => {
      this.settleCompletion = (failure) => (failure === undefined ? resolve() : reject(failure));
    });
    this.completion.catch(() => undefined);
    const { connectTimeoutMs, firstByteTimeoutMs } = context.timeouts;
    this.connectTimer = setTimeout(() => this.controller.abort(RemoteAbortReason.timeout('connect', connectTimeoutMs)), connectTimeoutMs);
    this.firstByteTimer = setTimeout(() => this.controller.abort(RemoteAbortReason.timeout('first_byte', firstByteTimeoutMs)), firstByteTimeoutMs);
    if (operation.signal.aborted) this.onOperationAbort();
    else operation.signal.addEventListener('abort', this.onOperationAbort, { once: true });
  }

  postJson(url: string, body: unknown): Promise<RemoteResponse> {
    return this.send(url, JSON.stringify(body), { 'content-type': 'application/json' });
  }

  /** multipart/form-data, encoded by encodeMultipart (its content type carries the boundary). */
  postMultipart(url: string, multipart: MultipartBody): Promise<RemoteResponse> {
    return this.send(url, multipart.body, { 'content-type': multipart.contentType });
  }

  /**
   * Body chunks as they arrive; each one re-arms the idle timer. A response past maxResponseBytes
   * (in total) fails: a server must not make us buffer or stream without end.
   */
  async *chunks(response: RemoteResponse): AsyncGenerator<Uint8Array> {
    if (response.body === null) return;
    let bytes = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      if (bytes > this.context.maxResponseBytes) {
        const limit = this.context.maxResponseBytes;
        this.controller.abort(RemoteAbortReason.cancelled());
        throw new EngineError(this.context.engine, 'response_too_large', `${this.context.engine}: the response was longer than ${limit} bytes`, false);
      }
      this.idleTimer?.refresh();
      yield chunk;
    }
  }

  async text(response: RemoteResponse, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
    const decoder = new TextDecoder();
    let text = '';
    let bytes = 0;
    for await (const chunk of this.chunks(response)) {
      const room = maxBytes - bytes;
      text += decoder.decode(chunk.length > room ? chunk.subarray(0, room) : chunk, { stream: true });
      bytes += chunk.length;
      if (bytes >= maxBytes) break;
    }
    return text + decoder.decode();
  }

  /** The first output reached the caller: the first-byte deadline no longer applies. */
  firstOutput(): void {
    clearTimeout(this.firstByteTimer);
    this.firstByteTimer = undefined;
    this.operation.markFirstResult();
  }

  /** Classifies a failure of this attempt: our own aborts by their reason, the rest by what failed. */
  failure(error: unknown): EngineError {
    const reason = remoteAbortReasonOf(this.signal);
    if (reason !== undefined) return reason.toEngineError(this.context.engine);
    return engineErrorFromThrown(this.context.engine, error, this.context.apiKey);
  }

  /** A failure after the first output: not retried (the caller has it), but the breaker counts it. */
  reportLateFailure(failure: EngineError): void {
    this.settleCompletion(failure);
  }

  /** Stops the timers and releases the connection (aborting a finished request is a no-op). */
  dispose(): void {
    this.settleCompletion();
    clearTimeout(this.connectTimer);
    clearTimeout(this.firstByteTimer);
    clearTimeout(this.idleTimer);
    this.operation.signal.removeEventListener('abort', this.onOperationAbort);
    if (!this.controller.signal.aborted) this.controller.abort(RemoteAbortReason.cancelled());
  }

  private async send(url: string, body: string | Uint8Array, headers: Record<string, string>): Promise<RemoteResponse> {
    const { apiKey, engine, timeouts } = this.context;
    const response = await this.context.fetch(url, {
      method: 'POST',
      headers: {
        ...this.context.headers,
        ...headers,
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      },
      body,
      signal: this.signal,
      timeoutMs: timeouts.totalTimeoutMs,
    });
    clearTimeout(this.connectTimer);
    this.idleTimer = setTimeout(() => this.controller.abort(RemoteAbortReason.timeout('idle', timeouts.idleTimeoutMs)), timeouts.idleTimeoutMs);
    if (response.ok) return response;
    const bodyText = await this.text(response, ERROR_BODY_MAX_BYTES).catch(() => '');
    throw engineErrorFromResponse({ engine, status: response.status, headers: response.headers, bodyText, apiKey });
  }
}
