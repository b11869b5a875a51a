import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { isRetryableDatabaseError, PhoneNumberRepository } from '@switchboard/persistence';
import { mintStreamToken, rejectCallTwiml, type VoiceWebhookParams } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import { AGENT_NOT_READY, AGENT_NOT_READY_MESSAGE } from '../../agents-api/agent-not-ready';
import { AgentsService } from '../../agents-api/agents.service';
import { CallAdmissionService } from '../../call-lifecycle/call-admission.service';
import { TwilioAccountService, type TwilioAccountCredentials } from '../accounts/twilio-account.service';
import { wrongAccount } from './twilio-account';
import { TRY_AGAIN_MESSAGE, VOICE_ANSWER_DEADLINE_MS, VoiceAnswerDeadlineExceeded, withinVoiceDeadline } from './voice-answer-deadline';
import { streamToCallTwiml } from './stream-twiml';

/** What the caller hears when the dialled number is not bound to any agent. */
export const UNKNOWN_NUMBER_MESSAGE =
  'Sorry, this number is not in service with us right now. Please check the number and try again. Goodbye.';

/** What the caller hears when the organization already has as many live calls as it may. */
export const ALL_AGENTS_BUSY_MESSAGE = 'All our agents are busy right now. Please call again in a few minutes. Goodbye.';
/** Said when the organization has spent its monthly budget and chose a hard limit. */
export const LINE_UNAVAILABLE_MESSAGE = 'Sorry, this line cannot take calls at the moment. Please try again later. Goodbye.';

/**
 * Answers Twilio's voice webhook: route the dialled number to its agent, open the call record (or
 * refuse politely when the organization is at its concurrency limit) and hand Twilio a media-stream
 * URL plus a single-use token that the media socket must present.
 */
@Injectable()
export class InboundCallService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly phoneNumbers: PhoneNumberRepository,
    private readonly admission: CallAdmissionService,
    private readonly accounts: TwilioAccountService,
    private readonly agents: AgentsService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(InboundCallService.name);
  }

  /**
   * `account` signed the webhook (see TwilioSignatureGuard): it must be the account that serves the
   * number's organization, or any organization's caller could be claimed by another account.
   */
  async answer(params: VoiceWebhookParams, account: TwilioAccountCredentials, now = new Date(), deadlineAt = performance.now() + VOICE_ANSWER_DEADLINE_MS): Promise<string> {
    try {
      return await withinVoiceDeadline(this.route(params, account, now), deadlineAt);
    } catch (error) {
      // Load or an outage must never reach the caller as Twilio's "application error": the call is
      // declined politely instead (see VoiceAnswerDeadlineFilter), and a retried webhook for the same
      // CallSid is answered by the same rules once the database is back.
      if (!isRetryableDatabaseError(error) && !(error instanceof VoiceAnswerDeadlineExceeded)) throw error;
      this.logger.error({ callSid: params.callSid, err: error }, 'inbound call declined: the database could not record it in time');
      return rejectCallTwiml(TRY_AGAIN_MESSAGE);
    }
  }

  private async route(params: VoiceWebhookParams, account: TwilioAccountCredentials, now: Date): Promise<string> {
    const route = await this.phoneNumbers.findRouteByE164(params.to);
    if (route && !(await this.accounts.mayActFor(account.owner, route.organizationId))) {
      this.logger.warn({ callSid: params.callSid, accountSid: params.accountSid, organizationId: route.organizationId }, 'voice webhook signed by an account that does not serve this number; refused');
      throw wrongAccount();
    }
    const base = {
      twilioCallSid: params.callSid,
      twilioAccountSid: params.accountSid,
      fromNumber: params.from,
      toNumber: params.to,
      status: params.callStatus,
    };
    if (!route) {
      await this.admission.recordRejected({ ...base, endReason: 'unknown_number', at: now });
      this.logger.info({ callSid: params.callSid, to: params.to }, 'inbound call to an unknown number refused');
      return rejectCallTwiml(UNKNOWN_NUMBER_MESSAGE);
    }

    // No DNS lookups here (Twilio waits for this answer): a key, secret or model that is missing.
    const readiness = await this.agents.readiness(route.organizationId, { engine: route.agentEngine }, route.config, { resolveHosts: false });
    if (!readiness.ready) {
      await this.admission.recordRejected({ ...base, organizationId: route.organizationId, agentId: route.agentId, endReason: AGENT_NOT_READY, at: now });
      this.logger.warn({ callSid: params.callSid, organizationId: route.organizationId, agentId: route.agentId, problems: readiness.problems }, 'inbound call refused: its agent is not ready');
      return rejectCallTwiml(AGENT_NOT_READY_MESSAGE);
    }

    const token = mintStreamToken(this.config.streamTokenTtlMs, now);
    const admission = await this.admission.admitInbound({
      ...base,
      organizationId: route.organizationId,
      agentId: route.agentId,
      agentConfigVersion: route.configVersion,
      streamTokenHash: token.tokenHash,
      streamTokenExpiresAt: token.expiresAt,
      at: now,
    });
    if (!admission.admitted) {
      const log = { callSid: params.callSid, organizationId: route.organizationId };
      if (admission.reason === 'budget_exceeded') {
        const { budgetMicros, spentMicros, currency } = admission.budget;
        this.logger.warn({ ...log, budgetMicros, spentMicros, currency }, 'inbound call refused: monthly budget spent (hard limit)');
        return rejectCallTwiml(LINE_UNAVAILABLE_MESSAGE);
      }
      if (admission.reason === 'capacity') {
        const { predictedUtilisation, maxUtilisation, liveCalls } = admission.capacity;
        this.logger.warn({ ...log, predictedUtilisation, maxUtilisation, liveCalls }, 'inbound call refused: inference capacity of this instance reached (INFERENCE_MAX_UTILISATION)');
        return rejectCallTwiml(ALL_AGENTS_BUSY_MESSAGE);
      }
      const { limit, activeCalls } = admission.snapshot;
      this.logger.warn({ ...log, limit, activeCalls }, 'inbound call refused: concurrency limit reached');
      return rejectCallTwiml(ALL_AGENTS_BUSY_MESSAGE);
    }
    const { call } = admission;
    this.logger.info({ callId: call.id, callSid: params.callSid, agentId: route.agentId }, 'inbound call answered');
    return streamToCallTwiml(this.config.publicBaseUrl, call.id, token.token, account);
  }
}
