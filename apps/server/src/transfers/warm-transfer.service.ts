import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { MeasuredCallUsage } from '@switchboard/billing';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallControlError, MAX_RESUMED_TURNS, type ResumedCall, type WarmTransferRequest } from '@switchboard/conversation';
import {
  CallEventRepository,
  CallStreamRepository,
  CallTransferRepository,
  isTerminalCallStatus,
  OPEN_TRANSFER_STATUSES,
  type CallTransferRecord,
  type TransferredCall,
} from '@switchboard/persistence';
import { mintStreamToken, STREAM_PARAM_RESUME_TRANSFER, webhookUrl, type StatusCallbackParams } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import type { Twilio } from 'twilio';
import { CallEndRetrier } from '../call-lifecycle/call-end-retrier';
import type { StreamHandOff } from '../call-runtime/stream-hand-off';
import { describeTwilioFailure } from '../twilio/call-control/twilio-failure';
import { TwilioRestClientFactory } from '../twilio/call-control/twilio-rest-client.factory';
import { streamToCallTwiml } from '../twilio/webhooks/stream-twiml';
import { wrongAccount } from '../twilio/webhooks/twilio-account';
import { TwilioAccountService } from '../twilio/accounts/twilio-account.service';
import { HeldCalls } from './held-calls';
import { whisperText } from './transfer-whisper';
import { conferenceNameOf, holdTwiml, tooLateTwiml, whisperTwiml } from './warm-transfer-twiml';

/** Twilio reports a destination that never answered within its own `timeout`; this much later, the server stops waiting for that report. */
const DIAL_REPORT_GRACE_MS = 10_000;
/** Once the destination answered, its whisper (at most ~45 s of <Say>) must end in the conference within this. */
const WHISPER_BOUND_MS = 90_000;
/** How long the caller's return waits for the agent's old stream to have flushed its records. */
const STREAM_END_WAIT_MS = 5_000;
/**
 * A call tries at most this many warm transfers: each one rings somebody's phone, and a caller (or
 * a model talked into it) must not be able to ring staff in a loop.
 */
export const MAX_WARM_TRANSFERS_PER_CALL = 3;
/** Held calls' heartbeat (well inside the reconciler's bound, as the media heartbeat is). */
const HELD_HEARTBEAT_MAX_MS = 10_000;

export interface BeginWarmTransfer {
  callId: string;
  twilioCallSid: string;
  twilioAccountSid: string;
  request: WarmTransferRequest;
  /** The agent's stream, which the hold ends; absent when no stream of this process carries the call. */
  handOff?: StreamHandOff;
}

type Located = { transfer: CallTransferRecord; call: TransferredCall & { twilioCallSid: string; twilioAccountSid: string }; client: Twilio };

/**
 * Warm transfers: (1) the caller goes on hold in a conference of its own (the agent's stream ends,
 * the call does not), (2) the destination is dialled and, when it answers, hears a summary of the
 * call before it joins, which (3) connects the caller: the call is then `transferred`. (4) If nobody
 * answers (Twilio's report, or the bound), the caller's call is redirected to a new media stream of
 * the same agent, which takes the conversation up where it stopped. Every step is a call event.
 *
 * The state is a call_transfers row moved on by conditional updates: Twilio's callbacks for one
 * transfer may reach any process of a cluster, and a callback racing the bound acts once.
 */
@Injectable()
export class WarmTransferService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly held = new HeldCalls();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transfers: CallTransferRepository,
    private readonly events: CallEventRepository,
    private readonly streams: CallStreamRepository,
    private readonly callEnds: CallEndRetrier,
    private readonly twilioRest: TwilioRestClientFactory,
    private readonly twilioAccounts: TwilioAccountService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(WarmTransferService.name);
  }

  onApplicationBootstrap(): void {
    const everyMs = Math.min(HELD_HEARTBEAT_MAX_MS, Math.floor(this.config.calls.reconcileAfterMs / 4));
    this.heartbeat = setInterval(() => void this.beat(), everyMs);
    this.heartbeat.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.heartbeat);
    this.held.clear();
  }

  /**
   * Steps (1) and (2). Resolves once the caller is on hold (the destination is being dialled, or
   * the caller is on the way back when the dial failed); throws a CallControlError, with nothing
   * changed for the caller, when Twilio refused the hold.
   */
  async begin(input: BeginWarmTransfer): Promise<void> {
    const { request } = input;
    if ((await this.transfers.countForCall(input.callId)) >= MAX_WARM_TRANSFERS_PER_CALL) {
      throw new CallControlError(`this call already tried ${MAX_WARM_TRANSFERS_PER_CALL} warm transfers`);
    }
    const client = await this.clientFor(input.twilioAccountSid);
    const transfer = await this.transfers.create({
      callId: input.callId,
      destination: request.to,
      conferenceName: conferenceNameOf(input.callId),
      whisper: request.whisper,
      summary: request.summary ?? null,
      answerTimeoutS: request.answerTimeoutS,
    });
    const twiml = holdTwiml({ conferenceName: transfer.conferenceName, holdMusicUrl: request.holdMusicUrl, statusCallbackUrl: this.url(transfer.id, 'conference') });
    try {
      await client.calls(input.twilioCallSid).update({ twiml });
    } catch (error) {
      await this.transfers.advance(transfer.id, ['holding'], 'abandoned');
      const failure = describeTwilioFailure(error);
      throw new CallControlError(`Twilio did not put call ${input.twilioCallSid} on hold: ${failure.message}`, failure.httpStatus === 404, { cause: error });
    }
    this.held.hold(transfer.id, input.callId, input.handOff);
    await this.event(input.callId, 'transfer_hold', { transferId: transfer.id, to: request.to, conference: transfer.conferenceName, holdMusicUrl: request.holdMusicUrl ?? null });
    // Resolved now, not after the dial: the agent ends its stream at once (Twilio is stopping it anyway).
    const located = await this.locate(transfer.id, input.twilioAccountSid);
    if (located) void this.dial(located);
  }

  /** The TwiML Twilio fetches when the destination answers: the whisper, then the conference. */
  async answered(transferId: string, signedAccountSid: string, destinationCallSid: string): Promise<string> {
    const located = await this.locate(transferId, signedAccountSid);
    if (!located) return tooLateTwiml();
    const answered = await this.transfers.advance(transferId, ['holding', 'dialing'], 'answered');
    if (!answered) return tooLateTwiml();
    const { transfer, call } = located;
    // Should Twilio's answer to calls.create still be on its way, the destination's CallSid is known from here.
    if (transfer.humanCallSid === null) await this.transfers.attachHumanCall(transferId, destinationCallSid);
    await this.event(call.id, 'transfer_answered', { transferId, to: transfer.destination, callSid: destinationCallSid });
    this.held.bound(transferId, WHISPER_BOUND_MS, () => void this.giveUp(transferId, 'whisper_timeout'));
    const whisper = transfer.whisper === 'summary' ? whisperText(transfer.summary, (await this.transfers.recentTurns(call.id, MAX_RESUMED_TURNS)).turns) : null;
    return whisperTwiml(whisper, transfer.conferenceName, this.url(transferId, 'conference'));
  }

  /** The destination's call progress: a final status before it joined means nobody took the call. */
  async dialStatus(transferId: string, params: StatusCallbackParams): Promise<void> {
    const located = await this.locate(transferId, params.accountSid);
    if (!located || !isTerminalCallStatus(params.status)) return;
    const { transfer } = located;
    if (transfer.humanCallSid !== null && transfer.humanCallSid !== params.callSid) return;
    await this.returnCaller(located, params.status === 'busy' ? 'busy' : params.status === 'completed' ? 'hung_up' : params.status === 'failed' ? 'failed' : 'no_answer', { status: params.status });
  }

  /** Conference participants joining and leaving (by CallSid): the destination joining connects the call. */
  async conferenceEvent(transferId: string, signedAccountSid: string, event: string, participantCallSid: string): Promise<void> {
    const located = await this.locate(transferId, signedAccountSid);
    if (!located) return;
    const { transfer, call } = located;
    if (event === 'participant-join' && participantCallSid === transfer.humanCallSid) {
      if (!(await this.transfers.advance(transferId, ['dialing', 'answered'], 'connected'))) return;
      await this.event(call.id, 'transfer_connected', { transferId, to: transfer.destination, callSid: participantCallSid, conference: transfer.conferenceName });
      await this.endCall(transferId, call.id, 'transferred');
    } else if (event === 'participant-leave' && participantCallSid === call.twilioCallSid) {
      // The caller hung up on hold (a caller taken back also leaves, but the transfer is no longer open then).
      if (!(await this.transfers.advance(transferId, OPEN_TRANSFER_STATUSES, 'abandoned'))) return;
      await this.event(call.id, 'transfer_abandoned', { transferId, to: transfer.destination, reason: 'caller_hung_up' });
      await this.hangUpDestination(located);
      await this.endCall(transferId, call.id, 'transfer_abandoned');
    }
  }

  /** For the stream that takes the call back: what was said before, and where its transcript goes on. */
  async resumedCall(callId: string, transferId: string): Promise<ResumedCall | undefined> {
    const transfer = await this.transfers.findById(transferId);
    if (!transfer || transfer.callId !== callId || transfer.status !== 'returned') return undefined;
    const { turns, nextIndex } = await this.transfers.recentTurns(callId, MAX_RESUMED_TURNS);
    return { destination: transfer.destination, priorTurns: turns.map(({ role, text }) => ({ role, text })), nextTranscriptIndex: nextIndex };
  }

  takeCarriedUsage(callId: string): MeasuredCallUsage | undefined {
    return this.held.takeCarried(callId);
  }

  // ---- steps ----------------------------------------------------------------------------------

  private async dial(located: Located): Promise<void> {
    const { transfer, call, client } = located;
    // Caller ID: the organization's number on this call (the one dialled in, or the one calling out).
    const from = call.direction === 'inbound' ? call.toNumber : call.fromNumber;
    try {
      const created = await client.calls.create({
        to: transfer.destination,
        from,
        url: this.url(transfer.id, 'whisper'),
        method: 'POST',
        statusCallback: this.url(transfer.id, 'dial-status'),
        statusCallbackMethod: 'POST',
        statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        timeout: transfer.answerTimeoutS,
      });
      await this.transfers.attachHumanCall(transfer.id, created.sid);
      await this.transfers.advance(transfer.id, ['holding'], 'dialing');
      await this.event(call.id, 'transfer_dialing', { transferId: transfer.id, to: transfer.destination, from, callSid: created.sid, answerTimeoutS: transfer.answerTimeoutS });
      this.held.bound(transfer.id, transfer.answerTimeoutS * 1000 + DIAL_REPORT_GRACE_MS, () => void this.giveUp(transfer.id, 'timeout'));
    } catch (error) {
      await this.event(call.id, 'transfer_failed', { transferId: transfer.id, to: transfer.destination, stage: 'dial', ...describeTwilioFailure(error) });
      await this.returnCaller(located, 'failed', {});
    }
  }

  /** The bound passed: a transfer still open is given up (the destination's call is ended, the caller taken back). */
  private async giveUp(transferId: string, reason: 'timeout' | 'whisper_timeout'): Promise<void> {
    try {
      const transfer = await this.transfers.findById(transferId);
      if (!transfer || !OPEN_TRANSFER_STATUSES.includes(transfer.status)) return this.held.release(transferId);
      const located = await this.locate(transferId, null);
      if (!located) return this.held.release(transferId);
      await this.hangUpDestination(located);
      await this.returnCaller(located, 'no_answer', { reason });
    } catch (error) {
      this.logger.error({ transferId, err: error }, 'warm transfer: giving up on the destination failed');
    }
  }

  /** Step (4): the caller goes back to the agent on a new media stream, with a fresh single-use token. */
  private async returnCaller(located: Located, outcome: string, detail: Record<string, unknown>): Promise<void> {
    const { transfer, call, client } = located;
    if (!(await this.transfers.advance(transfer.id, OPEN_TRANSFER_STATUSES, 'returned'))) return;
    await this.event(call.id, 'transfer_no_answer', { transferId: transfer.id, to: transfer.destination, outcome, ...detail });
    // The old stream's transcript must be stored before the new one reads it back.
    await this.held.streamEnded(transfer.id, STREAM_END_WAIT_MS);
    this.held.release(transfer.id);
    const token = mintStreamToken(this.config.streamTokenTtlMs);
    if (!(await this.transfers.reissueStreamToken(call.id, token.tokenHash, token.expiresAt))) return; // the call ended meanwhile
    const account = await this.twilioAccounts.forAccountSid(call.twilioAccountSid);
    if (!account) return this.endCall(transfer.id, call.id, 'twilio_error');
    const twiml = streamToCallTwiml(this.config.publicBaseUrl, call.id, token.token, account, { [STREAM_PARAM_RESUME_TRANSFER]: transfer.id });
    try {
      await client.calls(call.twilioCallSid).update({ twiml });
    } catch (error) {
      const failure = describeTwilioFailure(error);
      await this.event(call.id, 'transfer_return_failed', { transferId: transfer.id, ...failure });
      // No stream will come: a caller Twilio no longer knows hung up; otherwise they are not left on hold music.
      if (failure.httpStatus !== 404) await client.calls(call.twilioCallSid).update({ status: 'completed' }).catch(() => undefined);
      return this.endCall(transfer.id, call.id, failure.httpStatus === 404 ? 'transfer_abandoned' : 'twilio_error');
    }
    await this.event(call.id, 'transfer_returned', { transferId: transfer.id, to: transfer.destination, outcome });
    // Until the new stream starts, its heartbeat is this one.
    await this.streams.touchMediaSeen([call.id], new Date()).catch(() => undefined);
  }

  /** The call ends while held (connected, or abandoned): with what its agent's stream measured. */
  private async endCall(transferId: string, callId: string, endReason: string): Promise<void> {
    await this.held.streamEnded(transferId, STREAM_END_WAIT_MS);
    this.held.release(transferId);
    const usage = this.held.takeCarried(callId);
    await this.callEnds.finaliseDurably(callId, { endReason, endedAt: new Date(), ...(usage && { usage }) });
  }

  private async hangUpDestination(located: Located): Promise<void> {
    const sid = located.transfer.humanCallSid;
    if (sid === null) return;
    // status=completed ends a call whether it rings or is answered; one already over is fine.
    await located.client
      .calls(sid)
      .update({ status: 'completed' })
      .catch((error: unknown) => this.logger.warn({ transferId: located.transfer.id, twilio: describeTwilioFailure(error) }, 'warm transfer: the destination call could not be ended'));
  }

  // ---- plumbing -------------------------------------------------------------------------------

  /**
   * The transfer with its call and a REST client of the call's account, for a request signed by
   * `signedAccountSid` (null: the server's own timer). Another account's signature is refused (403);
   * an unknown transfer, or one whose call has no Twilio identity, is null (acknowledged, ignored).
   */
  private async locate(transferId: string, signedAccountSid: string | null): Promise<Located | null> {
    const found = await this.transfers.callOf(transferId);
    if (!found) return null;
    const { transfer, call } = found;
    if (signedAccountSid !== null && call.twilioAccountSid !== signedAccountSid) {
      this.logger.warn({ transferId, accountSid: signedAccountSid }, 'transfer callback signed by another account than the call belongs to; refused');
      throw wrongAccount();
    }
    if (call.twilioCallSid === null || call.twilioAccountSid === null) return null;
    const client = await this.clientFor(call.twilioAccountSid);
    return { transfer, call: { ...call, twilioCallSid: call.twilioCallSid, twilioAccountSid: call.twilioAccountSid }, client };
  }

  private async clientFor(accountSid: string): Promise<Twilio> {
    const rest = this.twilioAccounts.restCredentials(await this.twilioAccounts.forAccountSid(accountSid));
    if (!rest) throw new CallControlError('a warm transfer needs the Twilio account credentials of this call');
    return this.twilioRest.forAccount(rest);
  }

  private url(transferId: string, step: 'whisper' | 'dial-status' | 'conference'): string {
    return webhookUrl(this.config.publicBaseUrl, `/twilio/transfers/${transferId}/${step}`);
  }

  private async event(callId: string, type: string, payload: Record<string, unknown>): Promise<void> {
    try {
      await this.events.append(callId, { type, at: new Date(), payload });
    } catch (error) {
      // The transfer goes on without its record rather than strand the caller on hold.
      this.logger.error({ callId, type, err: error }, 'warm transfer event not stored');
    }
  }

  private async beat(): Promise<void> {
    const callIds = this.held.callIds();
    if (callIds.length === 0) return;
    await this.streams.touchMediaSeen(callIds, new Date()).catch((error: unknown) => this.logger.warn({ err: error }, 'held calls heartbeat not stored'));
  }
}
