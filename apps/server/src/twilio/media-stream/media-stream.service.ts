import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallControlError, TelephonyAudioInput, TelephonyAudioOutput, type CallControl, type WarmTransferRequest } from '@switchboard/conversation';
import { CallStreamRepository, type StreamAccount, type StreamCallContext } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { AgentEngines } from '../../agent-engines/agent-engines';
import { CallEndRetrier } from '../../call-lifecycle/call-end-retrier';
import type { CallRuntime, PhoneCallRef } from '../../call-runtime/call-runtime';
import { agentInputRates, agentOutputRates } from '../../call-runtime/agent-audio-rates';
import { CallRuntimes } from '../../call-runtime/call-runtimes.service';
import { LiveCalls } from '../../call-runtime/live-calls';
import { TwilioRestClientFactory } from '../call-control/twilio-rest-client.factory';
import { TwilioAccountService } from '../accounts/twilio-account.service';
import { ClusterLink } from '../../cluster/cluster-link';
import { CallRecordingService } from '../../recordings/call-recording.service';
import { TwilioMediaStreamTransport } from './twilio-media-stream-transport';
import { WarmTransferService } from '../../transfers/warm-transfer.service';
import type { LiveCallLabels } from '../../metrics/live-call-labels';

/** How often this process tells the database its live calls are still carried (at most; see heartbeatIntervalMs). */
const MEDIA_HEARTBEAT_MAX_INTERVAL_MS = 10_000;

/**
 * Twilio's media streams: each verified socket becomes a call runtime over a Twilio transport, with
 * Twilio's call control (hang-up, transfers, the drain's spoken message). It also keeps the calls
 * this process carries (LiveCalls, the browser's too) alive in the database: a heartbeat marks them,
 * so the reconciler only ends calls nobody carries any more; shutdown ends every call cleanly.
 */
@Injectable()
export class MediaStreamService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly calls: CallStreamRepository,
    private readonly callEnds: CallEndRetrier,
    private readonly agents: AgentEngines,
    private readonly twilioRest: TwilioRestClientFactory,
    private readonly twilioAccounts: TwilioAccountService,
    private readonly cluster: ClusterLink,
    private readonly runtimes: CallRuntimes,
    private readonly liveCalls: LiveCalls,
    private readonly recordings: CallRecordingService,
    private readonly transfers: WarmTransferService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(MediaStreamService.name);
    cluster.onCallNote((note) => this.tellLocalAgent(note.callId, note.answeredBy));
  }

  /**
   * Designs every resampling filter the phone's agents need before the first call arrives. Filter
   * design is CPU work (hundreds of ms for a sharp 80 dB filter on a cold JIT) that would otherwise
   * block the event loop, and so every live call, on the first call of each rate pair.
   */
  onModuleInit(): void {
    const started = performance.now();
    const noSink = { sendAudio: () => undefined, sendMark: () => undefined, endOfUtterance: () => undefined, clear: () => undefined };
    for (const rate of agentInputRates(this.agents)) new TelephonyAudioInput(rate);
    for (const rate of agentOutputRates(this.agents)) new TelephonyAudioOutput(rate, noSink);
    this.logger.debug({ durationMs: Math.round(performance.now() - started) }, 'audio filters prepared');
  }

  onApplicationBootstrap(): void {
    this.heartbeat = setInterval(() => void this.beat(), heartbeatIntervalMs(this.config.calls.reconcileAfterMs));
    this.heartbeat.unref();
  }

  /** Call sockets open now, on every carrier. */
  get activeConnections(): number {
    return this.liveCalls.size;
  }

  /** Labels of the calls whose agents run here now (the live-calls gauge). */
  liveCallLabels(): LiveCallLabels[] {
    return this.liveCalls.labels();
  }

  /** The drain's bound passed: every call still live is ended with `message` (spoken by Twilio on a phone call). */
  async endLiveCallsWithMessage(message: string): Promise<void> {
    await Promise.all(this.liveCalls.all().map((runtime) => runtime.endWithMessage(message, (call, text) => this.sayAndHangUp(call, text))));
  }

  /** Asks Twilio, with the credentials of the call's account, to speak `message` and hang up; false where there are none. */
  private async sayAndHangUp(call: PhoneCallRef, message: string): Promise<boolean> {
    const rest = this.twilioAccounts.restCredentials(await this.twilioAccounts.forAccountSid(call.accountSid));
    if (!rest) return false;
    await this.twilioRest.callControlFor(rest, call.callSid).sayAndHangUp(message);
    return true;
  }

  /**
   * Passes a late answering-machine verdict to the call's live agent (the record is updated by the
   * webhook either way). In a cluster the callback may land on a worker that does not carry the
   * stream: then every other worker is told, and the one that carries it passes it on. Returns
   * whether this process's agent was told.
   */
  noteAnsweredBy(callId: string, answeredBy: string): boolean {
    if (this.tellLocalAgent(callId, answeredBy)) return true;
    this.cluster.broadcastCallNote({ callId, answeredBy });
    return false;
  }

  /**
   * Every local runtime of the call is told, also one still checking its token (it keeps the
   * verdict for its agent). Only a runtime that carries the call counts as told: a socket still
   * being checked may be refused, so the other workers hear it too.
   */
  private tellLocalAgent(callId: string, answeredBy: string): boolean {
    let told = false;
    for (const runtime of this.liveCalls.claiming(callId)) {
      runtime.noteAnsweredBy(answeredBy);
      if (runtime.activeCallId === callId) told = true;
    }
    return told;
  }

  /** A verified media socket; `account` signed its upgrade, and only that account's calls may stream on it. */
  accept(socket: WebSocket, account: StreamAccount): CallRuntime {
    return this.runtimes.open(new TwilioMediaStreamTransport(socket, this.logger, account, this.config.calls.outboundAudioLeadMs), {
      createCallControl: (call, runtime) => this.callControl(call.twilioCallSid, call.twilioAccountSid, (request) => this.warmTransfer(call, request, runtime)),
      resumedCall: (callId, transferId) => this.transfers.resumedCall(callId, transferId),
      takeCarriedUsage: (callId) => this.transfers.takeCarriedUsage(callId),
    });
  }

  /**
   * Twilio REST call control with the credentials of the account the call belongs to (looked up
   * when first used). Without credentials (local development) hanging up still works, because
   * closing the media stream ends a <Connect><Stream> call; a transfer cannot.
   */
  private callControl(callSid: string | null, accountSid: string | null, warmTransfer: (request: WarmTransferRequest) => Promise<void>): CallControl {
    const control = async (): Promise<CallControl | undefined> => {
      // A Twilio socket claims only phone calls, which have both; without them there is no REST control.
      if (callSid === null || accountSid === null) return undefined;
      const rest = this.twilioAccounts.restCredentials(await this.twilioAccounts.forAccountSid(accountSid));
      if (!rest) return undefined;
      return this.twilioRest.callControlFor(rest, callSid);
    };
    return {
      hangUp: async (reason) => {
        await (await control())?.hangUp(reason);
      },
      transfer: async (to) => {
        const twilio = await control();
        if (!twilio) throw new CallControlError('transfer needs the Twilio account credentials of this call (TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN, or the organization\'s own account)');
        await twilio.transfer(to);
      },
      warmTransfer,
    };
  }

  /**
   * A warm transfer of the call this runtime carries: the runtime hands the call off first
   * (so Twilio stopping the stream for the hold does not end the call), then the transfer puts the
   * caller on hold and dials. Should Twilio refuse the hold, the stream goes on; had it already
   * ended meanwhile, the call is ended here, as nobody else will.
   */
  private async warmTransfer(
    call: StreamCallContext,
    request: WarmTransferRequest,
    runtime: CallRuntime,
  ): Promise<void> {
    if (call.twilioCallSid === null || call.twilioAccountSid === null) throw new CallControlError('a warm transfer needs a Twilio call');
    const handOff = runtime.beginHandOff();
    try {
      await this.transfers.begin({ callId: call.callId, twilioCallSid: call.twilioCallSid, twilioAccountSid: call.twilioAccountSid, request, handOff });
    } catch (error) {
      if (!handOff.cancel()) {
        const usage = await handOff.suspended;
        await this.callEnds.finaliseDurably(call.callId, { endReason: 'stream_stopped', endedAt: new Date(), usage });
      }
      throw error;
    }
  }

  /** One statement for every call this process carries; a failure only delays the next beat. */
  private async beat(): Promise<void> {
    const callIds = this.liveCalls.callIds();
    try {
      await this.calls.touchMediaSeen(callIds, new Date());
    } catch (error) {
      this.logger.warn({ err: error, calls: callIds.length }, 'media heartbeat not stored; the next one will try again');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.liveCalls.shutdown();
    // The calls' recordings are stored after their calls end: wait for them (the shutdown bound still holds).
    await this.recordings.drain();
  }
}

/** Well inside the reconciler's bound, so a live call is never taken for a quiet one. */
export function heartbeatIntervalMs(reconcileAfterMs: number): number {
  return Math.min(MEDIA_HEARTBEAT_MAX_INTERVAL_MS, Math.floor(reconcileAfterMs / 4));
}
