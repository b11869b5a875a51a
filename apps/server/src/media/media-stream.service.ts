import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { TelephonyAudioInput, TelephonyAudioOutput } from '@switchboard/conversation';
import { CallEventRepository, CallRepository } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { AgentEngines } from '../agents/agent-engines';
import { CallEventBuffer } from './call-event-buffer';
import { MediaStreamConnection } from './media-stream-connection';

/** Owns the live media connections, so shutdown can end every call cleanly. */
@Injectable()
export class MediaStreamService implements OnModuleInit, OnApplicationShutdown {
  private readonly connections = new Set<MediaStreamConnection>();

  constructor(
    private readonly calls: CallRepository,
    private readonly callEvents: CallEventRepository,
    private readonly agents: AgentEngines,
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
    for (const engine of this.agents.all()) {
      new TelephonyAudioInput(engine.audio.inputSampleRate);
      new TelephonyAudioOutput(engine.audio.outputSampleRate, noSink);
    }
    this.logger.info({ durationMs: Math.round(performance.now() - started) }, 'audio filters prepared');
  }

  get activeConnections(): number {
    return this.connections.size;
  }

  accept(socket: WebSocket): MediaStreamConnection {
    const connection = new MediaStreamConnection(socket, {
      calls: this.calls,
      resolveAgent: (engine) => this.agents.resolve(engine),
      createEventBuffer: (callId) => new CallEventBuffer(callId, this.callEvents, this.logger),
      logger: this.logger,
      onClosed: (closed) => this.connections.delete(closed),
    });
    this.connections.add(connection);
    return connection;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.connections].map((connection) => connection.shutdown()));
  }
}
