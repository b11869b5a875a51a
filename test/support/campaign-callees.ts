import type { FakeCall, FakeTwilioRestServer } from '@switchboard/testing';
import { answeredOutboundCall } from './outbound-calls';
import type { TenantTwilioAccount } from './tenant-twilio';
import type { TestServer } from './test-server';

/**
 * What the person at a number does when a campaign calls it:
 *  - answer: picks up (Twilio reports in-progress and fetches the TwiML), talks briefly, hangs up;
 *  - media: picks up, and the simulated caller connects the call's media stream to the agent before hanging up;
 *  - busy / no-answer: the line is busy, or rings out;
 *  - hold: rings until the test calls release(number), then answers.
 */
export type CalleeBehaviour = 'answer' | 'media' | 'busy' | 'no-answer' | 'hold';

const ENDED = new Set(['completed', 'canceled', 'busy', 'no-answer', 'failed']);

/**
 * Plays the people a campaign calls, on the fake Twilio REST server: every outbound call the server
 * creates on `account` is picked up by a poll and played out as its number's behaviour for that
 * attempt says (the n-th call to a number takes the n-th behaviour; the last one repeats). Twilio's
 * side (status callbacks, the TwiML request) is the fake's own, sent to whichever server
 * `target()` names now, so a test can restart the server in the middle. pause() waits until
 * nothing is in flight and keeps every call as it is (ringing, answered) until resume().
 */
export class CampaignCallees {
  /** Errors of the played calls (a test fails on any). */
  readonly errors: unknown[] = [];
  private readonly behaviours = new Map<string, CalleeBehaviour[]>();
  private readonly callsTo = new Map<string, number>();
  private readonly seen = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly released = new Map<string, () => void>();
  /**
   * Numbers released before their call reached its hold (the poll that picks a call up runs every
   * 20 ms, and on a loaded machine a test's release can come first): the hold then ends at once.
   */
  private readonly releasedEarly = new Set<string>();
  private paused: { promise: Promise<void>; resume: () => void } | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly twilio: FakeTwilioRestServer,
    private readonly account: TenantTwilioAccount,
    private readonly target: () => TestServer,
    private readonly talkMs = 300,
  ) {}

  /** Sets what `number` does, per attempt (default: answer). */
  on(number: string, ...behaviours: CalleeBehaviour[]): this {
    this.behaviours.set(number, behaviours);
    return this;
  }

  start(): void {
    this.timer = setInterval(() => this.poll(), 20);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.paused?.resume();
    for (const release of this.released.values()) release();
    await Promise.allSettled([...this.inFlight]);
  }

  /** No callback from now on until resume(); resolves once those already sent are answered. */
  async pause(): Promise<void> {
    let resume = (): void => undefined;
    const promise = new Promise<void>((resolve) => (resume = resolve));
    this.paused = { promise, resume };
    // Each played call stops at its next step; steps already running (a callback, a TwiML fetch) finish.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await this.twilio.webhooksSettled();
  }

  resume(): void {
    const paused = this.paused;
    this.paused = null;
    paused?.resume();
  }

  /** A call on hold to `number` is answered now. */
  release(number: string): void {
    const release = this.released.get(number);
    this.released.delete(number);
    if (release) release();
    else this.releasedEarly.add(number);
  }

  /** The calls created on the account, oldest first. */
  calls(): FakeCall[] {
    return [...this.twilio.calls.values()].filter((call) => call.accountSid === this.account.accountSid && call.direction === 'outbound-api').sort((a, b) => a.dateCreated.getTime() - b.dateCreated.getTime());
  }

  /** The most calls (to `numbers`, or any) live at once, from the fake's own create and end times. */
  maxLiveAtOnce(numbers?: ReadonlySet<string>): number {
    const events: Array<[number, number]> = [];
    for (const call of this.calls()) {
      if (numbers && !numbers.has(call.to)) continue;
      events.push([call.dateCreated.getTime(), 1]);
      events.push([call.endTime?.getTime() ?? Number.POSITIVE_INFINITY, -1]);
    }
    // An end and a start in the same millisecond: the end first (the server saw it before dialling).
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let live = 0;
    let max = 0;
    for (const [, change] of events) max = Math.max(max, (live += change));
    return max;
  }

  /** Calls still live in the fake. */
  liveCalls(): FakeCall[] {
    return this.calls().filter((call) => !ENDED.has(call.status));
  }

  private poll(): void {
    for (const call of this.calls()) {
      if (this.seen.has(call.sid) || call.status !== 'queued') continue;
      this.seen.add(call.sid);
      const nth = this.callsTo.get(call.to) ?? 0;
      this.callsTo.set(call.to, nth + 1);
      const plan = this.behaviours.get(call.to) ?? ['answer'];
      const behaviour = plan[Math.min(nth, plan.length - 1)] ?? 'answer';
      const played = this.play(call, behaviour).catch((error: unknown) => {
        this.errors.push(error);
      });
      this.inFlight.add(played);
      void played.finally(() => this.inFlight.delete(played));
    }
  }

  private async play(call: FakeCall, behaviour: CalleeBehaviour): Promise<void> {
    await this.step();
    this.twilio.ringCall(call.sid);
    if (behaviour === 'busy' || behaviour === 'no-answer') {
      await this.step();
      this.twilio.endCall(call.sid, behaviour);
      return;
    }
    if (behaviour === 'hold' && !this.releasedEarly.delete(call.to)) await new Promise<void>((resolve) => this.released.set(call.to, resolve));
    await this.step();
    const program = await this.twilio.answerCall(call.sid);
    if (program.stream === null) throw new Error(`the TwiML of ${call.sid} has no stream`);
    if (behaviour === 'media') {
      // The callee's audio reaches the agent: the simulated caller opens the stream the TwiML names.
      const callId = program.stream.parameters['callId']!;
      const callee = answeredOutboundCall(this.target(), { id: callId, twilioCallSid: call.sid, fromNumber: call.from, toNumber: call.to }, this.account);
      await callee.dial();
      await callee.connectMedia();
      await new Promise((resolve) => setTimeout(resolve, this.talkMs));
      await this.step();
      // The callee hangs up: Twilio reports the end and stops the stream.
      this.twilio.endCall(call.sid, 'completed');
      await callee.hangup();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, this.talkMs));
    await this.step();
    this.twilio.endCall(call.sid, 'completed');
  }

  /** Waits while paused. */
  private async step(): Promise<void> {
    while (this.paused) await this.paused.promise;
  }
}
