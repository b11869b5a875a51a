import { Inject, Injectable, NotFoundException, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallControlError, type CallControl } from '@switchboard/conversation';
import { AgentRepository, type Refusal } from '@switchboard/persistence';
import { mintStreamToken } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import type { WebSocket } from 'ws';
import { AgentEngines } from '../agent-engines/agent-engines';
import { AgentsService } from '../agents-api/agents.service';
import { CallAdmissionService } from '../call-lifecycle/call-admission.service';
import { agentInputRates, agentOutputRates } from '../call-runtime/agent-audio-rates';
import type { CallRuntime } from '../call-runtime/call-runtime';
import { CallRuntimes } from '../call-runtime/call-runtimes.service';
import { WebAudioInput, WebAudioOutput } from './web-call-audio';
import { WEB_CALL_PATH } from './web-call-protocol';
import { WebCallTransport } from './web-call-transport';

export type WebCallOutcome =
  | { admitted: true; callId: string; token: string; expiresAt: Date; url: string }
  | { admitted: false; refusal: Refusal };

/**
 * Calls from the browser: admission and a one-time stream token (POST /v1/agents/{id}/web-calls),
 * then the socket that presents it. The call is a call like any other from there on: the same
 * records, event buffer, usage meter, cost ledger, webhooks, heartbeat and shutdown (its CallRuntime
 * is the one a phone call has, over a web call transport).
 */
@Injectable()
export class WebCallService implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly agents: AgentRepository,
    private readonly agentsApi: AgentsService,
    private readonly admission: CallAdmissionService,
    private readonly engines: AgentEngines,
    private readonly runtimes: CallRuntimes,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(WebCallService.name);
  }

  /** The browser's audio filters, designed before the first call (see MediaStreamService.onModuleInit). */
  onModuleInit(): void {
    const noPcmSink = { sendPcm: () => undefined, sendMark: () => undefined, endOfUtterance: () => undefined, clear: () => undefined };
    for (const rate of agentInputRates(this.engines)) new WebAudioInput(rate);
    for (const rate of agentOutputRates(this.engines)) new WebAudioOutput(rate, noPcmSink);
  }

  /** `testRunId`: the scenario test run placing the call (see agent-tests/); `now`: the call's start, the origin of its offsets. */
  async create(organizationId: string, agentId: string, variables: Record<string, string>, options: { testRunId?: string; now?: Date } = {}): Promise<WebCallOutcome> {
    const now = options.now ?? new Date();
    const agent = await this.agents.findById(organizationId, agentId);
    if (!agent) throw new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'agent_not_found', message: `No agent ${agentId}.` });
    // An agent that cannot work (no key, a model not pulled) is refused here, saying why, rather than
    // answered and failed a moment later with the reason buried in the call's events.
    await this.agentsApi.assertReady(organizationId, agent);
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

  accept(socket: WebSocket): CallRuntime {
    return this.runtimes.open(new WebCallTransport(socket, this.logger, this.config.calls.outboundAudioLeadMs), { createCallControl: (call) => webCallControl(call.testRunId !== null) });
  }
}

/**
 * A web call has no phone line: hanging up ends the socket; a transfer to a phone number is not
 * possible. A scenario test's call simulates the transfer instead (the agent's side of it runs
 * for real, is recorded as `call_transferred`, and ends the call as `transferred`), so a suite can
 * check that the agent hands the caller over when it should.
 */
function webCallControl(isScenarioTest: boolean): CallControl {
  return {
    hangUp: async () => undefined, // endCall closes the socket, which is the whole call
    transfer: async () => {
      if (isScenarioTest) return;
      throw new CallControlError('a web call cannot be transferred to a phone number');
    },
  };
}

/** ws:// or wss:// on the public base URL: the same origin the console is served from. */
export function webCallUrl(publicBaseUrl: string): string {
  const url = new URL(WEB_CALL_PATH, publicBaseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

