import { DtmfCollector, describeDtmfInput, type DtmfTimers } from './dtmf-collector';

/** A hand-driven clock implementing the injected timers, to check the collector uses them and only them. */
class ManualTimers implements DtmfTimers {
  nowMs = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, delayMs: number): number {
    const id = this.nextId++;
    this.pending.set(id, { at: this.nowMs + delayMs, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  advance(ms: number): void {
    const until = this.nowMs + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, timer]) => timer.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.nowMs = due[1].at;
      due[1].callback();
    }
    this.nowMs = until;
  }
}

describe('DtmfCollector (jest fake timers)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function collector(interDigitTimeoutMs?: number): { inputs: string[][]; dtmf: DtmfCollector } {
    const inputs: string[][] = [];
    const dtmf = new DtmfCollector({ interDigitTimeoutMs, onInput: (digits) => inputs.push(digits) });
    return { inputs, dtmf };
  }

  it('ends the input at once on #, which is part of it', () => {
    const { inputs, dtmf } = collector();
    for (const digit of ['1', '2', '3', '#']) dtmf.push(digit);
    expect(inputs).toEqual([['1', '2', '3', '#']]);
    // No timer is left behind to deliver anything else.
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(inputs).toHaveLength(1);
  });

  it('ends the input interDigitTimeoutMs (default 1500) after the last digit, each digit restarting the wait', () => {
    const { inputs, dtmf } = collector();
    dtmf.push('4');
    jest.advanceTimersByTime(1400);
    dtmf.push('5');
    jest.advanceTimersByTime(1400);
    expect(inputs).toEqual([]);
    dtmf.push('*');
    jest.advanceTimersByTime(1499);
    expect(inputs).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(inputs).toEqual([['4', '5', '*']]);
  });

  it('honours a custom interDigitTimeoutMs and collects the next input separately', () => {
    const { inputs, dtmf } = collector(3000);
    dtmf.push('9');
    jest.advanceTimersByTime(2999);
    expect(inputs).toEqual([]);
    jest.advanceTimersByTime(1);
    dtmf.push('0');
    dtmf.push('#');
    expect(inputs).toEqual([['9'], ['0', '#']]);
  });

  it('a lone # is an input of its own', () => {
    const { inputs, dtmf } = collector();
    dtmf.push('#');
    expect(inputs).toEqual([['#']]);
  });

  it('accepts all sixteen keys, lowercase a-d as A-D, and ignores anything else without losing the digits so far', () => {
    const { inputs, dtmf } = collector();
    for (const digit of ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', 'A', 'b', 'C', 'd']) dtmf.push(digit);
    for (const junk of ['', '12', 'E', 'x', ' ', '##', '½']) dtmf.push(junk);
    dtmf.push(undefined as unknown as string);
    dtmf.push(5 as unknown as string);
    dtmf.push('#');
    expect(inputs).toEqual([['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', 'A', 'B', 'C', 'D', '#']]);
  });

  it('an ignored key does not restart the inter-digit wait', () => {
    const { inputs, dtmf } = collector();
    dtmf.push('7');
    jest.advanceTimersByTime(1000);
    dtmf.push('x');
    jest.advanceTimersByTime(500);
    expect(inputs).toEqual([['7']]);
  });

  it('close() drops the pending digits, cancels the timer and ignores later presses', () => {
    const { inputs, dtmf } = collector();
    dtmf.push('1');
    dtmf.push('2');
    dtmf.close();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(5000);
    dtmf.push('3');
    dtmf.push('#');
    expect(inputs).toEqual([]);
  });

  it('hands over a fresh list: a digit pushed from inside onInput starts the next input', () => {
    const inputs: string[][] = [];
    const dtmf: DtmfCollector = new DtmfCollector({
      onInput: (digits) => {
        inputs.push(digits);
        if (inputs.length === 1) dtmf.push('8');
      },
    });
    dtmf.push('1');
    dtmf.push('#');
    expect(inputs).toEqual([['1', '#']]);
    jest.advanceTimersByTime(1500);
    expect(inputs).toEqual([['1', '#'], ['8']]);
  });
});

describe('DtmfCollector (injected timers)', () => {
  it('runs its inter-digit timeout on the timers it is given, clearing the old one on each digit', () => {
    const timers = new ManualTimers();
    const inputs: string[][] = [];
    const dtmf = new DtmfCollector({ interDigitTimeoutMs: 1000, onInput: (digits) => inputs.push(digits), timers });
    dtmf.push('1');
    timers.advance(900);
    dtmf.push('2');
    expect(timers.pendingCount).toBe(1);
    timers.advance(999);
    expect(inputs).toEqual([]);
    timers.advance(1);
    expect(inputs).toEqual([['1', '2']]);
    expect(timers.pendingCount).toBe(0);
    dtmf.push('3');
    dtmf.close();
    expect(timers.pendingCount).toBe(0);
  });

  it('refuses bad options with clear errors', () => {
    const onInput = (): void => undefined;
    expect(() => new DtmfCollector({ onInput, interDigitTimeoutMs: 0 })).toThrow(/interDigitTimeoutMs must be a duration > 0 ms, got 0/);
    expect(() => new DtmfCollector({ onInput, interDigitTimeoutMs: Number.NaN })).toThrow(RangeError);
    expect(() => new DtmfCollector({} as unknown as { onInput: () => void })).toThrow(/needs an onInput callback/);
  });
});

describe('describeDtmfInput', () => {
  it('spells the keys out with spaces, for the LLM', () => {
    expect(describeDtmfInput(['1', '2', '3', '#'])).toBe('The caller pressed 1 2 3 #');
    expect(describeDtmfInput(['*', '0', 'a'])).toBe('The caller pressed * 0 A');
  });

  it('refuses an empty input or a key that is not DTMF', () => {
    expect(() => describeDtmfInput([])).toThrow(/at least one digit/);
    expect(() => describeDtmfInput(['1', 'x'])).toThrow(/not a DTMF key: "x"/);
  });
});
