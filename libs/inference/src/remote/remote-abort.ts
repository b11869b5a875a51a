import { EngineError } from '../contracts';

export type TimeoutPhase = 'connect' | 'first_byte' | 'idle' | 'total';

/**
 * Why a remote request was aborted: set as the AbortSignal's reason by our own timers or by the
 * caller's cancellation, so a failure can be classified from the signal rather than guessed from
 * whatever error fetch or the body stream happened to throw.
 */
export class RemoteAbortReason {
  private constructor(
    readonly kind: 'timeout' | 'cancelled',
    readonly phase: TimeoutPhase | undefined,
    readonly limitMs: number | undefined,
  ) {}

  static timeout(phase: TimeoutPhase, limitMs: number): RemoteAbortReason {
    return new RemoteAbortReason('timeout', phase, limitMs);
  }

  static cancelled(): RemoteAbortReason {
    return new RemoteAbortReason('cancelled', undefined, undefined);
  }

  toEngineError(engine: string, lastError?: EngineError): EngineError {
    if (this.kind === 'cancelled') return new EngineError(engine, 'cancelled', `${engine}: cancelled by the caller`, false);
    const what = TIMEOUT_DESCRIPTIONS[this.phase ?? 'total'];
    const last = lastError === undefined ? '' : ` (last failure: ${lastError.message})`;
    // Retryable: a slow server may well answer a repeat in time.
    return new EngineError(engine, 'timeout', `${engine}: ${what} within ${this.limitMs} ms${last}`, true, { cause: lastError });
  }
}

const TIMEOUT_DESCRIPTIONS: Record<TimeoutPhase, string> = {
  connect: 'no response headers',
  first_byte: 'no first output',
  idle: 'response stalled: no data',
  total: 'request did not complete',
};

/** The reason a signal was aborted with, when it was one of ours. */
export function remoteAbortReasonOf(signal: AbortSignal): RemoteAbortReason | undefined {
  return signal.aborted && signal.reason instanceof RemoteAbortReason ? signal.reason : undefined;
}
