import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { TelephonyAudioInput, TelephonyAudioOutput } from '@switchboard/conversation';
import { CallEventRepository, CallRepository, ConversationRecordRepository } from '@switchboard/persistence';
import { CallControlError, type CallControl } from '@switchboard/conversation';
import { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { AgentEngines } from '../agents/agent-engines';
import { TwilioRestClientFactory } from '../telephony-control/twilio-rest-client.factory';
import { CallUsageRegistry } from '../usage/call-usage-registry';
import { CallEventBuffer } from './call-event-buffer';
import { ConversationRecordBuffer } from './conversation-record-buffer';
import { MediaStreamConnection } from './media-stream-connection';

/** Owns the live media connections, so shutdown can end every call cleanly. */
@Injectable()
export class MediaStreamService implements OnModuleInit, OnApplicationShutdown {
  private readonly connections = new Set<MediaStreamConnection>();

  constructor(
    private readonly calls: CallRepository,
    private readonly callEvents: CallEventRepository,
    private readonly agents: AgentEngines,
    private readonly conversationRecords: ConversationRecordRepository,
    private readonly twilioRest: TwilioRestClientFactory,
    private readonly usage: CallUsageRegistry,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(MediaStreamService.name);
  }

  /**
   * Designs every resampling filter the agents need before the first call arrives. Filter design
   * is CPU work (hundreds of ms for a sharp 80 dB filter on a cold JIT) that would otherwise block
   * the event loop, and so every live call, on the first call of each rate pair.
   */
  onModuleInit(): void {
    const started = performance.now();
    const noSink = { sendAudio: () => undefined, sendMark: () => undefined, clear: () => undefined };
    const inputRates = new Set(this.agents.all().map((engine) => engine.audio.inputSampleRate));
    // Agent voices come at these rates (Flite 16 kHz, Piper 22.05 kHz, OpenAI/Kokoro 24 kHz).
    const outputRates = new Set([...this.agents.all().map((engine) => engine.audio.outputSampleRate), 16_000, 22_050, 24_000]);
    for (const rate of inputRates) new TelephonyAudioInput(rate);
    for (const rate of outputRates) new TelephonyAudioOutput(rate, noSink);
    this.logger.info({ durationMs: Math.round(performance.now() - started) }, 'audio filters prepared');
  }

  get activeConnections(): number {
    return this.connections.size;
  }

  /**
   * Passes a late answering-machine verdict to the call's live agent, when this process carries its
   * stream (the record is updated by the webhook either way). Returns whether an agent was told.
   */
  noteAnsweredBy(callId: string, answeredBy: string): boolean {
    for (const connection of this.connections) {
      if (connection.activeCallId !== callId) continue;
      connection.noteAnsweredBy(answeredBy);
      return true;
    }
    return false;
  }

  accept(socket: WebSocket): MediaStreamConnection {
    const connection = new MediaStreamConnection(socket, {
      calls: this.calls,
      resolveAgent: (engine) => this.agents.resolve(engine),
      createEventBuffer: (callId) => new CallEventBuffer(callId, this.callEvents, this.logger),
      createRecorder: (callId, events) => new ConversationRecordBuffer(callId, this.conversationRecords, events, this.logger),
      createCallControl: (callSid) => this.callControl(callSid),
      usage: this.usage,
      logger: this.logger,
      onClosed: (closed) => this.connections.delete(closed),
    });
    this.connections.add(connection);
    return connection;
  }

  /**
   * Twilio REST call control. Without Twilio credentials (local development) hanging up still
   * works, because closing the media stream ends a <Connect><Stream> call; a transfer cannot.
   */
  private callControl(callSid: string): CallControl {
    if (this.twilioRest.isConfigured) {
      try {
        return this.twilioRest.callControl(callSid);
      } catch (error) {
        this.logger.warn({ err: error, callSid }, 'Twilio call control unavailable for this call');
      }
    }
    return {
      hangUp: async () => undefined,
      transfer: async () => {
        throw new CallControlError('transfer needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN (Twilio REST API)');
      },
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.connections].map((connection) => connection.shutdown()));
  }
}
