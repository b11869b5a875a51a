import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { EngineError } from '@switchboard/inference';
import type { EngineErrorMetrics, EngineProvider, EngineStep } from '../metrics/engine-error-metrics';
import type { CallTrace } from './call-trace';
import { ATTR } from './span-attributes';

/** Which engine a request goes to, in bounded terms (labels and span attributes alike). */
export interface EngineTarget {
  step: EngineStep;
  provider: EngineProvider;
  /** The model the agent config names (an identifier; none for a built-in engine such as Flite). */
  model?: string;
}

/** How a request failed, in bounded terms: never the error's message (it may quote a response body). */
export interface EngineFailure {
  /** EngineError's code (timeout, unavailable, bad_request, ...), or the error's class name. */
  errorType: string;
  httpStatus?: number;
  retryable?: boolean;
  /** The call stopped it (barge-in, hang-up): not a failure, neither counted nor marked. */
  cancelled: boolean;
  /** False: marked on the span but not counted, as the request was never made (a tool call with invalid arguments). */
  counted?: boolean;
}

/** One engine request being watched: its span (when the call is traced) and its failure count. */
export interface EngineRequest {
  /** What was learnt along the way (tokens, bytes, attempts). */
  note(attributes: Attributes): void;
  /** The request failed (or was cancelled): counted and marked unless cancelled; ends it. */
  fail(failure: EngineFailure): void;
  /** The request finished; a second end (or an end after fail) does nothing. */
  end(): void;
}

export interface EngineObserver {
  /** `startTime`: for a request reported once it is over (a realtime response). */
  request(callId: string | undefined, target: EngineTarget, engineName: string, spanName: string, startTime?: Date): EngineRequest;
  /** A failure outside any request (a realtime session's error event): counted only. */
  failed(target: EngineTarget, failure: EngineFailure): void;
}

/** An engine's failure in bounded terms. */
export function engineFailureOf(error: unknown): EngineFailure {
  if (error instanceof EngineError) {
    return { errorType: error.code, httpStatus: error.httpStatus, retryable: error.retryable, cancelled: error.code === 'cancelled' };
  }
  const name = error instanceof Error ? error.name : '_OTHER';
  return { errorType: name, cancelled: name === 'AbortError' };
}

/**
 * The server's observer: every failure counts in switchboard_engine_errors_total; a span is made
 * only for a call being traced (looked up by call id when the request starts). Without tracing,
 * that lookup finds nothing and a request costs one map read.
 */
export class EngineObservers implements EngineObserver {
  constructor(
    private readonly errors: Pick<EngineErrorMetrics, 'failed'>,
    private readonly traces: { find(callId: string): CallTrace | undefined },
  ) {}

  request(callId: string | undefined, target: EngineTarget, engineName: string, spanName: string, startTime?: Date): EngineRequest {
    const trace = callId === undefined ? undefined : this.traces.find(callId);
    if (trace === undefined) return new ObservedRequest(target, undefined, this.errors);
    const attributes: Attributes = { [ATTR.step]: target.step, [ATTR.provider]: target.provider, [ATTR.engineName]: engineName };
    if (target.model !== undefined) attributes[ATTR.model] = target.model;
    return new ObservedRequest(target, trace.startEngineSpan(spanName, target.step, attributes, startTime), this.errors);
  }

  failed(target: EngineTarget, failure: EngineFailure): void {
    if (!failure.cancelled) this.errors.failed(target.step, target.provider);
  }
}

class ObservedRequest implements EngineRequest {
  private done = false;

  constructor(
    private readonly target: EngineTarget,
    private readonly span: Span | undefined,
    private readonly errors: Pick<EngineErrorMetrics, 'failed'>,
  ) {}

  note(attributes: Attributes): void {
    if (!this.done) this.span?.setAttributes(attributes);
  }

  fail(failure: EngineFailure): void {
    if (this.done) return;
    this.done = true;
    if (failure.cancelled) {
      this.span?.setAttribute(ATTR.cancelled, true);
    } else {
      if (failure.counted !== false) this.errors.failed(this.target.step, this.target.provider);
      this.span?.setAttributes({
        [ATTR.errorType]: failure.errorType,
        ...(failure.httpStatus !== undefined && { [ATTR.httpStatus]: failure.httpStatus }),
        ...(failure.retryable !== undefined && { [ATTR.retryable]: failure.retryable }),
      });
      this.span?.setStatus({ code: SpanStatusCode.ERROR, message: failure.errorType });
    }
    this.span?.end();
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.span?.end();
  }
}
