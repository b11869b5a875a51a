import { statusCallbackParams, voiceWebhookParams } from '@switchboard/simulated-caller';
import { FakeConferences, type ConferenceOutcome, type FakeConference } from './fake-conferences';
import type { FakeCall, FakeCallStatus } from './fake-twilio-rest-types';
import { FakeWebhookSender, type FakeWebhookDelivery } from './fake-webhook-sender';
import { readTwimlProgram, type TwimlProgram } from './twiml-program';

const ENDED: ReadonlySet<FakeCallStatus> = new Set(['completed', 'canceled', 'busy', 'no-answer', 'failed']);

/** What the fake server lends its call progress: the accounts' tokens and its calls. */
export interface FakeCallProgressHost {
  authTokenOf(accountSid: string): string;
  call(sid: string): FakeCall | undefined;
  applyStatus(call: FakeCall, status: FakeCallStatus): void;
}

/**
 * What Twilio does with a call beyond answering REST requests: it reports the call's progress to
 * its StatusCallback (for the events asked for in StatusCallbackEvent; `completed` alone when none
 * were), fetches its TwiML when it is answered (a signed POST to its Url, or the inline Twiml),
 * says its <Say>s, and puts it in the <Conference> the TwiML names (conference callbacks included).
 * A call whose TwiML is replaced leaves its conference first; a conference that ends lets its
 * remaining participants go, and their calls end (nothing follows the <Dial> in the TwiML the fake
 * is given; other verbs are not run).
 */
export class FakeCallProgress {
  private readonly webhooks = new FakeWebhookSender();
  private readonly rooms = new FakeConferences();
  private readonly sequences = new Map<string, number>();

  constructor(private readonly host: FakeCallProgressHost) {}

  /**
   * Where Twilio's callbacks go: URLs under `publicBaseUrl` (the application's PUBLIC_BASE_URL, as
   * in its TwiML and calls.create) are POSTed, signed with the account's token, to `localBaseUrl`.
   * Until this is called, callbacks are recorded as unroutable and nothing is sent.
   */
  deliverWebhooksTo(publicBaseUrl: string, localBaseUrl: string): void {
    this.webhooks.deliverTo(publicBaseUrl, localBaseUrl);
  }

  /** Every callback made so far (status callbacks, TwiML requests, conference events), in order. */
  get webhookDeliveries(): readonly FakeWebhookDelivery[] {
    return this.webhooks.deliveries;
  }

  /** Resolves once every callback made so far has been answered. */
  webhooksSettled(): Promise<void> {
    return this.webhooks.settled();
  }

  /** Every conference calls have joined, in order of creation. */
  get conferences(): readonly FakeConference[] {
    return this.rooms.all;
  }

  /** The live conference with this name (else the latest one of that name). */
  conference(name: string): FakeConference | undefined {
    return this.rooms.find(name);
  }

  /** A created call's phone rings (reported as `ringing` when asked for). */
  ring(sid: string): void {
    const call = this.callOf(sid);
    if (call.status !== 'queued') throw new Error(`fake Twilio: call ${call.sid} is ${call.status}, it cannot start ringing`);
    this.host.applyStatus(call, 'ringing');
    this.reportStatus(call);
  }

  /**
   * A created call is answered: reported, its TwiML fetched (signed POST to its Url) or taken
   * inline, and run (<Say>s recorded in `said`, <Dial><Conference> joined). Resolves with what ran.
   */
  async answer(sid: string): Promise<TwimlProgram> {
    const call = this.callOf(sid);
    if (call.status !== 'queued' && call.status !== 'ringing') throw new Error(`fake Twilio: call ${call.sid} is ${call.status}, it cannot be answered`);
    this.host.applyStatus(call, 'in-progress');
    this.reportStatus(call);
    const xml = call.twiml ?? (await this.fetchTwiml(call));
    const program = readTwimlProgram(xml);
    this.run(call, program);
    return program;
  }

  /** The call ends from the network's side (`no-answer`, `busy`, `failed`, `completed` when a party hangs up): reported, out of its conference. */
  finish(sid: string, status: FakeCallStatus): void {
    this.finishCall(this.callOf(sid), status);
  }

  /** The call's TwiML was replaced through the API: it leaves its conference and runs the new TwiML. */
  redirected(call: FakeCall): void {
    this.apply(call.accountSid, this.rooms.leave(call.sid));
    if (call.twiml !== undefined) this.run(call, readTwimlProgram(call.twiml));
  }

  /** The call is over (hung up through the API, or by finish()). */
  ended(call: FakeCall): void {
    this.apply(call.accountSid, this.rooms.leave(call.sid));
    this.reportStatus(call);
  }

  private run(call: FakeCall, program: TwimlProgram): void {
    call.said.push(...program.says);
    if (program.conference) this.apply(call.accountSid, this.rooms.join(call.accountSid, call.sid, program.conference));
    else if (program.hangup) this.finishCall(call, 'completed');
  }

  private apply(accountSid: string, outcome: ConferenceOutcome): void {
    const token = this.host.authTokenOf(accountSid);
    for (const callback of outcome.callbacks) void this.webhooks.send(callback.url, callback.params, token);
    for (const sid of outcome.dialEnded) {
      const call = this.host.call(sid);
      if (call && !ENDED.has(call.status)) this.finishCall(call, 'completed');
    }
  }

  private finishCall(call: FakeCall, status: FakeCallStatus): void {
    if (!ENDED.has(status)) throw new Error(`fake Twilio: ${status} does not end a call`);
    this.host.applyStatus(call, status);
    this.ended(call);
  }

  private callOf(sid: string): FakeCall {
    const call = this.host.call(sid);
    if (call === undefined) throw new Error(`fake Twilio knows no call ${sid}`);
    return call;
  }

  private reportStatus(call: FakeCall): void {
    if (call.statusCallback === undefined) return;
    const event = call.status === 'in-progress' ? 'answered' : ENDED.has(call.status) ? 'completed' : call.status;
    const subscribed = call.statusCallbackEvents.length > 0 ? call.statusCallbackEvents : ['completed'];
    if (!subscribed.includes(event)) return;
    const sequenceNumber = this.sequences.get(call.sid) ?? 0;
    this.sequences.set(call.sid, sequenceNumber + 1);
    const durationS = call.startTime !== null && call.endTime !== null ? (call.endTime.getTime() - call.startTime.getTime()) / 1000 : 0;
    const params = statusCallbackParams(
      { accountSid: call.accountSid, callSid: call.sid, from: call.from, to: call.to },
      { callStatus: call.status, sequenceNumber, callDurationSec: durationS, at: new Date() },
    );
    params['Direction'] = call.direction;
    void this.webhooks.send(call.statusCallback, params, this.host.authTokenOf(call.accountSid));
  }

  private async fetchTwiml(call: FakeCall): Promise<string> {
    if (call.url === undefined) throw new Error(`fake Twilio: call ${call.sid} has neither Url nor Twiml`);
    const params = voiceWebhookParams(
      { accountSid: call.accountSid, callSid: call.sid, from: call.from, to: call.to },
      { Direction: call.direction, CallStatus: 'in-progress' },
    );
    const delivery = await this.webhooks.send(call.url, params, this.host.authTokenOf(call.accountSid));
    if (delivery.status !== 200) throw new Error(`fake Twilio: the TwiML request for ${call.sid} was answered ${delivery.status}${delivery.error ? ` (${delivery.error})` : ''}`);
    return delivery.body;
  }
}
