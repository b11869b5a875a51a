import { CallMetrics } from '../metrics/call-metrics';
import { WaterfallObservingRecorder } from '../metrics/waterfall-observing-recorder';
import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { AgentRepository, CallStreamRepository, type Refusal } from '@switchboard/persistence';
import { mintStreamToken } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { AgentEngines } from '../agents/agent-engines';
import { CallAdmissionService } from '../call-lifecycle/call-admission.service';
import { CallEndRetrier } from '../call-lifecycle/call-end-retrier';
import { CallEventBuffer } from '../media/call-event-buffer';
import { ConversationRecordBuffer } from '../media/conversation-record-buffer';
import { MediaStreamService } from '../media/media-stream.service';
import { CallRecordBatching } from '../media/record-batching/call-record-batching';
import { CallUsageRegistry } from '../usage/call-usage-registry';
import { WebCallConnection } from './web-call-connection';
import { WEB_CALL_PATH } from './web-call-protocol';
import { CallRecordingService } from '../recordings/call-recording.service';

export type WebCallOutcome =
  | { admitted: true; callId: string; token: string; expiresAt: Date; url: string }
  | { admitted: false; refusal: Refusal };

/**
 * Calls from the browser: admission and a one-time stream token (POST /v1/agents/{id}/web-calls),
 * then the socket that presents it. The call is a call like any other from there on: the same
 * records, event buffer, usage meter, cost ledger, webhooks, heartbeat and shutdown.
 */
@Injectable()
export class WebCallService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly agents: AgentRepository,
    private readonly admission: CallAdmissionService,
    private readonly streams: CallStreamRepository,
    private readonly callEnds: CallEndRetrier,
    private readonly engines: AgentEngines,
    private readonly usage: CallUsageRegistry,
    private readonly recordBatching: CallRecordBatching,
    private readonly mediaStreams: MediaStreamService,
    private readonly recordings: CallRecordingService,
    private readonly callMetrics: CallMetrics,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(WebCallService.name);
  }

  /** `testRunId`: the scenario test run placing the call (see agent-tests/); `now`: the call's start, the origin of its offsets. */
  async create(organizationId: string, agentId: string, variables: Record<string, string>, options: { testRunId?: string; now?: Date } = {}): Promise<WebCallOutcome> {
    const now = options.now ?? new Date();
    const agent = await this.agents.findById(organizationId, agentId);
    if (!agent) throw new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'agent_not_found', message: `No agent ${agentId}.` });
    const token = mintStreamToken(this.config.streamTokenTtlMs, now);
    const admission = await this.admission.admitWeb({
      organizationId,
      agentId,
      agentConfigVersion: agent.currentVersion,
      variables,
      streamTokenHash: token.tokenHash,
      streamTokenExpiresAt: token.expiresAt,
      ...(options.testRunId !== undefined && { testRunId: options.testRunId }),
      at: now,
    });
    if (!admission.admitted) {
      const { admitted: _admitted, ...refusal } = admission;
      this.logger.warn({ organizationId, reason: refusal.reason }, 'web call refused');
      return { admitted: false, refusal };
    }
    this.logger.info({ callId: admission.call.id, agentId }, 'web call admitted');
    return { admitted: true, callId: admission.call.id, token: token.token, expiresAt: token.expiresAt, url: webCallUrl(this.config.publicBaseUrl) };
  }

  accept(socket: WebSocket): WebCallConnection {
    let release: () => void = () => undefined;
    const connection = new WebCallConnection(socket, {
      claimStream: (input) => this.streams.claimMediaStream({ ...input, account: { kind: 'web' } }),
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
      onClosed: () => release(),
    });
    release = this.mediaStreams.carry(connection);
    return connection;
  }
}

/** ws:// or wss:// on the public base URL: the same origin the console is served from. */
export function webCallUrl(publicBaseUrl: string): string {
  const url = new URL(WEB_CALL_PATH, publicBaseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

