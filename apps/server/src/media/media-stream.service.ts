import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { TelephonyAudioInput, TelephonyAudioOutput } from '@switchboard/conversation';
import { CallStreamRepository, type StreamAccount } from '@switchboard/persistence';
import { CallControlError, type CallControl, type WarmTransferRequest } from '@switchboard/conversation';
import { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { AgentEngines } from '../agents/agent-engines';
import { CallEndRetrier } from '../call-lifecycle/call-end-retrier';
import { TwilioRestClientFactory } from '../telephony-control/twilio-rest-client.factory';
import { TwilioAccountService } from '../twilio-accounts/twilio-account.service';
import { CallUsageRegistry } from '../usage/call-usage-registry';
import { ClusterLink } from '../cluster/cluster-link';
import { WebAudioInput, WebAudioOutput } from '../web-calls/web-call-audio';
import { CallRecordBatching } from './record-batching/call-record-batching';
import { CallRecordingService } from '../recordings/call-recording.service';
import { CallEventBuffer } from './call-event-buffer';
import { ConversationRecordBuffer } from './conversation-record-buffer';
import { MediaStreamConnection, type PhoneCallRef } from './media-stream-connection';
import { WarmTransferService } from '../transfers/warm-transfer.service';
import { CallMetrics } from '../metrics/call-metrics';
import type { LiveCallLabels } from '../metrics/live-call-labels';
import { WaterfallObservingRecorder } from '../metrics/waterfall-observing-recorder';

/** How often this process tells the database its live calls are still carried (at most; see heartbeatIntervalMs). */
const MEDIA_HEARTBEAT_MAX_INTERVAL_MS = 10_000;

/** A call connection of another edge (the browser's web calls) that this process carries. */
export interface CarriedCall {
  readonly activeCallId: string | undefined;
  readonly liveCallLabels: LiveCallLabels | undefined;
  shutdown(): Promise<void>;
  /** The drain's bound passed: end the call, telling the caller `message`. */
  endWithMessage(message: string): Promise<void>;
}

/**
 * Owns the live media connections: shutdown ends every call cleanly, and a heartbeat marks the calls
 * this process carries as alive, so the reconciler only ends calls nobody carries any more.
 */
@Injectable()

export class MediaStreamService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly connections = new Set<MediaStreamConnection>();
  /** Web call connections: the same heartbeat (so the reconciler never takes them for quiet) and the same shutdown. */
  private readonly otherEdges = new Set<CarriedCall>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly calls: CallStreamRepository,
    private readonly callEnds: CallEndRetrier,
    private readonly agents: AgentEngines,
    private readonly twilioRest: TwilioRestClientFactory,
    private readonly twilioAccounts: TwilioAccountService,
    private readonly usage: CallUsageRegistry,
    private readonly cluster: ClusterLink,
    private readonly recordBatching: CallRecordBatching,
    private readonly recordings: CallRecordingService,
    private readonly transfers: WarmTransferService,
    private readonly callMetrics: CallMetrics,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(MediaStreamService.name);
    cluster.onCallNote((note) => this.tellLocalAgent(note.callId, note.answeredBy));
  }

  /**
   * Designs every resampling filter the agents need before the first call arrives. Filter design
   * is CPU work (hundreds of ms for a sharp 80 dB filter on a cold JIT) that would otherwise block
   * the event loop, and so every live call, on the first call of each rate pair.
   */
  onModuleInit(): void {
    const started = performance.now();
    const noSink = { sendAudio: () => undefined, sendMark: () => undefined, endOfUtterance: () => undefined, clear: () => undefined };
    const inputRates = new Set(this.agents.all().map((engine) => engine.audio.inputSampleRate));
    // Agent voices come at these rates (Flite 16 kHz, Piper 22.05 kHz, OpenAI/Kokoro 24 kHz).
    const outputRates = new Set([...this.agents.all().map((engine) => engine.audio.outputSampleRate), 16_000, 22_050, 24_000]);
    const noPcmSink = { sendPcm: () => undefined, sendMark: () => undefined, endOfUtterance: () => undefined, clear: () => undefined };
    for (const rate of inputRates) {
      new TelephonyAudioInput(rate);
      new WebAudioInput(rate); // the browser's calls (16 kHz) too
    }
    for (const rate of outputRates) {
      new TelephonyAudioOutput(rate, noSink);
      new WebAudioOutput(rate, noPcmSink);
    }
    this.logger.info({ durationMs: Math.round(performance.now() - started) }, 'audio filters prepared');
  }

  onApplicationBootstrap(): void {
    this.heartbeat = setInterval(() => void this.beat(), heartbeatIntervalMs(this.config.calls.reconcileAfterMs));
    this.heartbeat.unref();
  }

  get activeConnections(): number {
    return this.connections.size + this.otherEdges.size;
  }

  /** Labels of the calls whose agents run here now (the live-calls gauge). */
  liveCallLabels(): LiveCallLabels[] {
    return [...this.connections, ...this.otherEdges].flatMap((connection) => (connection.liveCallLabels === undefined ? [] : [connection.liveCallLabels]));
  }

  /** The drain's bound passed: every call still live is ended with `message` (spoken by Twilio on a phone call). */
  async endLiveCallsWithMessage(message: string): Promise<void> {
    await Promise.all([
      ...[...this.connections].map((connection) => connection.endWithMessage(message, (call, text) => this.sayAndHangUp(call, text))),
      ...[...this.otherEdges].map((connection) => connection.endWithMessage(message)),
    ]);
  }

  /** Asks Twilio, with the credentials of the call's account, to speak `message` and hang up; false where there are none. */
  private async sayAndHangUp(call: PhoneCallRef, message: string): Promise<boolean> {
    const rest = this.twilioAccounts.restCredentials(await this.twilioAccounts.forAccountSid(call.accountSid));
    if (!rest) return false;
    await this.twilioRest.callControlFor(rest, call.callSid).sayAndHangUp(message);
    return true;
  }

  /** Carries another edge's call connection from now on; returns what to call when it closes. */
  carry(connection: CarriedCall): () => void {
    this.otherEdges.add(connection);
    return () => this.otherEdges.delete(connection);
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
   * Every local connection of the call is told, also one still checking its token (it keeps the
   * verdict for its agent). Only a connection that carries the call counts as told: a socket still
   * being checked may be refused, so the other workers hear it too.
   */
  private tellLocalAgent(callId: string, answeredBy: string): boolean {
    let told = false;
    for (const connection of this.connections) {
      if (connection.claimedOrClaimingCallId !== callId) continue;
      connection.noteAnsweredBy(answeredBy);
      if (connection.activeCallId === callId) told = true;
    }
    return told;
  }

  /** A verified media socket; `account` signed its upgrade, and only that account's calls may stream on it. */
  accept(socket: WebSocket, account: StreamAccount): MediaStreamConnection {
    // The call control of a warm transfer hands the connection's call off: it needs the connection
    // (its closures run once the stream is claimed, after this assignment).
    const connection: MediaStreamConnection = new MediaStreamConnection(
      socket,
      {
        claimStream: (input) => this.calls.claimMediaStream(input),
        finaliseCall: (callId, end) => this.callEnds.finaliseDurably(callId, end),
        resolveAgent: (engine) => this.agents.resolve(engine),
        createEventBuffer: (callId) => new CallEventBuffer(callId, this.recordBatching.callEvents, this.logger),
        createRecorder: (callId, events) =>
          new WaterfallObservingRecorder(new ConversationRecordBuffer(callId, this.recordBatching.conversationRecords, events, this.logger), (waterfall) =>
            this.callMetrics.turnCompleted(waterfall),
          ),
        createCallControl: (call) => this.callControl(call.twilioCallSid, call.twilioAccountSid, (request) => this.warmTransfer(call, request, connection)),
        resumedCall: (callId, transferId) => this.transfers.resumedCall(callId, transferId),
        takeCarriedUsage: (callId) => this.transfers.takeCarriedUsage(callId),
        startRecording: (start) => this.recordings.begin(start),
        usage: this.usage,
        logger: this.logger,
        onClosed: (closed) => this.connections.delete(closed),
      },
      account,
    );
    this.connections.add(connection);
    return connection;
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
   * A warm transfer of the call this connection carries: the connection hands the call off first
   * (so Twilio stopping the stream for the hold does not end the call), then the transfer puts the
   * caller on hold and dials. Should Twilio refuse the hold, the stream goes on; had it already
   * ended meanwhile, the call is ended here, as nobody else will.
   */
  private async warmTransfer(
    call: { callId: string; twilioCallSid: string | null; twilioAccountSid: string | null },
    request: WarmTransferRequest,
    connection: MediaStreamConnection,
  ): Promise<void> {
    if (call.twilioCallSid === null || call.twilioAccountSid === null) throw new CallControlError('a warm transfer needs a Twilio call');
    const handOff = connection.beginHandOff();
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
    const callIds = [...this.connections, ...this.otherEdges].flatMap((connection) => (connection.activeCallId === undefined ? [] : [connection.activeCallId]));
    try {
      await this.calls.touchMediaSeen(callIds, new Date());
    } catch (error) {
      this.logger.warn({ err: error, calls: callIds.length }, 'media heartbeat not stored; the next one will try again');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeat);
    await Promise.all([...this.connections, ...this.otherEdges].map((connection) => connection.shutdown()));
    // The calls' recordings are stored after their calls end: wait for them (the shutdown bound still holds).
    await this.recordings.drain();
  }
}

/** Well inside the reconciler's bound, so a live call is never taken for a quiet one. */
export function heartbeatIntervalMs(reconcileAfterMs: number): number {
  return Math.min(MEDIA_HEARTBEAT_MAX_INTERVAL_MS, Math.floor(reconcileAfterMs / 4));
}
