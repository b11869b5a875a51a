/**
 * Collects keypad digits (DTMF) into one caller input, the way IVRs do: `#` ends the input at once
 * (and is part of it), otherwise the input ends once no digit has come for interDigitTimeoutMs.
 * The input then goes to the LLM as text (describeDtmfInput).
 */

/** The sixteen DTMF keys: 0-9, *, #, and A-D (on some business phones). */
const DTMF_DIGIT = /^[0-9*#A-D]$/;
const END_OF_INPUT = '#';

/** The timers the inter-digit timeout runs on; injected so tests can drive time by hand. */
export interface DtmfTimers {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface DtmfCollectorOptions {
  /** Silence after a digit that ends the input; default 1500. */
  interDigitTimeoutMs?: number;
  /**
   * Receives each finished input (never empty). The collector is already empty when it is called,
   * so a digit pushed from inside starts the next input.
   */
  onInput: (digits: string[]) => void;
  timers?: DtmfTimers;
}

const systemTimers: DtmfTimers = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class DtmfCollector {
  private readonly interDigitTimeoutMs: number;
  private readonly onInput: (digits: string[]) => void;
  private readonly timers: DtmfTimers;
  private digits: string[] = [];
  private timer: unknown;
  private closed = false;

  constructor(options: DtmfCollectorOptions) {
    const timeout = options.interDigitTimeoutMs ?? 1500;
    if (!(Number.isFinite(timeout) && timeout > 0)) throw new RangeError(`interDigitTimeoutMs must be a duration > 0 ms, got ${timeout}`);
    if (typeof options.onInput !== 'function') throw new TypeError('DtmfCollector needs an onInput callback');
    this.interDigitTimeoutMs = timeout;
    this.onInput = options.onInput;
    this.timers = options.timers ?? systemTimers;
  }

  /**
   * Adds one key press. Anything that is not a DTMF key (telephony events can carry other
   * values) is ignored, as are presses after close(). Lowercase a-d count as A-D.
   */
  push(digit: string): void {
    if (this.closed) return;
    const key = normaliseDigit(digit);
    if (key === undefined) return;
    this.stopTimer();
    this.digits.push(key);
    if (key === END_OF_INPUT) {
      this.finish();
      return;
    }
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.finish();
    }, this.interDigitTimeoutMs);
  }

  /** Stops collecting (the call ended): digits not yet handed over are dropped, nobody is left to answer them. */
  close(): void {
    this.closed = true;
    this.stopTimer();
    this.digits = [];
  }

  private finish(): void {
    const digits = this.digits;
    this.digits = [];
    if (digits.length > 0) this.onInput(digits);
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The text the LLM receives for a keypad input: `The caller pressed 1 2 3 #`. */
export function describeDtmfInput(digits: readonly string[]): string {
  if (digits.length === 0) throw new RangeError('describeDtmfInput needs at least one digit');
  const keys = digits.map((digit) => {
    const key = normaliseDigit(digit);
    if (key === undefined) throw new RangeError(`not a DTMF key: ${JSON.stringify(digit)} (expected 0-9, *, # or A-D)`);
    return key;
  });
  return `The caller pressed ${keys.join(' ')}`;
}

function normaliseDigit(digit: unknown): string | undefined {
  if (typeof digit !== 'string') return undefined;
  const key = digit.toUpperCase();
  return DTMF_DIGIT.test(key) ? key : undefined;
}
