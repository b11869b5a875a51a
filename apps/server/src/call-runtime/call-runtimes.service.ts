import { Injectable } from '@nestjs/common';
import { CallStreamRepository } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { AgentEngines } from '../agent-engines/agent-engines';
import { CallEndRetrier } from '../call-lifecycle/call-end-retrier';
import { CallMetrics } from '../metrics/call-metrics';
import { WaterfallObservingRecorder } from '../metrics/waterfall-observing-recorder';
import { CallRecordingService } from '../recordings/call-recording.service';
import { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';
import { CallRuntime } from './call-runtime';
import type { CallRuntimeDependencies } from './call-runtime-dependencies';
import type { CallTransport } from './call-transport';
import { LiveCalls } from './live-calls';
import { CallEventBuffer } from './records/call-event-buffer';
import { ConversationRecordBuffer } from './records/conversation-record-buffer';
import { CallRecordBatching } from './records/record-batching/call-record-batching';

/** What differs between carriers beyond their protocol: what the agent may do with the call, and a warm transfer's return. */
export type CarrierServices = Pick<CallRuntimeDependencies, 'createCallControl' | 'resumedCall' | 'takeCarriedUsage'>;

/**
 * Opens a CallRuntime for each socket a carrier accepts, wired once for every carrier: the token
 * claim, the durable end, the records, the recording, the usage meter and the live-calls registry.
 */
@Injectable()
export class CallRuntimes {
  constructor(
    private readonly streams: CallStreamRepository,
    private readonly callEnds: CallEndRetrier,
    private readonly engines: AgentEngines,
    private readonly usage: CallUsageRegistry,
    private readonly recordBatching: CallRecordBatching,
    private readonly recordings: CallRecordingService,
    private readonly callMetrics: CallMetrics,
    private readonly liveCalls: LiveCalls,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CallRuntime.name);
  }

  /** A runtime for the call `transport` carries from now on, registered as live until it ends. */
  open(transport: CallTransport, carrier: CarrierServices): CallRuntime {
    const runtime = new CallRuntime(transport, {
      claimStream: (input) => this.streams.claimMediaStream(input),
      finaliseCall: (callId, end) => this.callEnds.finaliseDurably(callId, end),
      resolveAgent: (engine) => this.engines.resolve(engine),
      createEventBuffer: (callId) => new CallEventBuffer(callId, this.recordBatching.callEvents, this.logger),
      createRecorder: (callId, events) =>
        new WaterfallObservingRecorder(new ConversationRecordBuffer(callId, this.recordBatching.conversationRecords, events, this.logger), (waterfall) =>
          this.callMetrics.turnCompleted(waterfall),
        ),
      startRecording: (start) => this.recordings.begin(start),
      usage: this.usage,
      logger: this.logger,
      onClosed: (closed) => this.liveCalls.remove(closed),
      ...carrier,
    });
    this.liveCalls.add(runtime);
    return runtime;
  }
}
