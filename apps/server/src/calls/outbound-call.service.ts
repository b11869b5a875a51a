import { Inject, Injectable } from '@nestjs/common';
import { AgentsService } from '../agents-api/agents.service';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallControlError } from '@switchboard/conversation';
import {
  AgentRepository,
  CallEventRepository,
  CallRepository,
  PhoneNumberRepository,
  type CallRecord,
  type Refusal,
} from '@switchboard/persistence';
import { webhookUrl } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import { CallAdmissionService } from '../call-lifecycle/call-admission.service';
import { CallEndService } from '../call-lifecycle/call-end.service';
import { unknownAgent } from '../phone-numbers/phone-number-errors';
import { describeTwilioFailure } from '../twilio/call-control/twilio-failure';
import { TwilioRestClientFactory, type TwilioRestCredentials } from '../twilio/call-control/twilio-rest-client.factory';
import { TwilioAccountService } from '../twilio/accounts/twilio-account.service';
import {
  callAlreadyEnded,
  callNotFound,
  callNotPlacedYet,
  webCallHangUp,
  fromNumberNotOwned,
  twilioNotConfigured,
  twilioRefused,
} from './outbound-call-errors';
import type { PlaceCallBody } from './outbound-call-requests.schema';
import { voicemailForCall } from './outbound-voicemail';

/** Every call progress event Twilio can report, so the record's status timeline is complete. */
const STATUS_CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];

export type PlaceCallOutcome = { placed: true; call: CallRecord } | { placed: false; refusal: Refusal };

/**
 * Outbound calls through Twilio's REST API. A call is first reserved under the organization's
 * concurrency limit (a live row, no CallSid yet), then placed with calls.create; Twilio fetches the
 * TwiML (POST /twilio/outbound/:callId) when the callee answers. A call Twilio refuses is finalised
 * at once, so a reservation never stays counted for a call that was never placed.
 */
@Injectable()
export class OutboundCallService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly calls: CallRepository,
    private readonly admission: CallAdmissionService,
    private readonly callEnds: CallEndService,
    private readonly callEvents: CallEventRepository,
    private readonly agents: AgentRepository,
    private readonly agentsApi: AgentsService,
    private readonly phoneNumbers: PhoneNumberRepository,
    private readonly twilioRest: TwilioRestClientFactory,
    private readonly twilioAccounts: TwilioAccountService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(OutboundCallService.name);
  }

  /**
   * POST /v1/calls, and each call of a campaign (the dialer passes `campaignAttempt`: the call row then
   * names the contact and attempt, unique together, so an attempt is never placed twice). Refusals
   * under the limit or budget are returned; the other failures throw the API's errors.
   */
  async place(organizationId: string, body: PlaceCallBody, campaignAttempt?: { contactId: string; attempt: number }): Promise<PlaceCallOutcome> {
    const agent = await this.agents.findById(organizationId, body.agentId);
    if (!agent) throw unknownAgent(body.agentId);
    if (!(await this.phoneNumbers.ownsNumber(organizationId, body.from))) throw fromNumberNotOwned(body.from);
    await this.agentsApi.assertReady(organizationId, agent);
    // The config version the call will run with decides its default voicemail.
    const snapshot = await this.agents.configVersion(agent.id, agent.currentVersion);
    const voicemailMessage = voicemailForCall(body, agent.engine, snapshot?.config);
    // Placed with the organization's own Twilio account (the operator's for the bootstrap organization).
    const rest = this.twilioAccounts.restCredentials(await this.twilioAccounts.forOrganization(organizationId));
    if (!rest) throw twilioNotConfigured();

    const admission = await this.admission.reserveOutbound({
      organizationId,
      agentId: agent.id,
      agentConfigVersion: agent.currentVersion,
      twilioAccountSid: rest.accountSid,
      fromNumber: body.from,
      toNumber: body.to,
      variables: body.variables,
      machineDetection: body.machineDetection ?? null,
      voicemailMessage,
      ...(campaignAttempt && { campaignAttempt }),
    });
    if (!admission.admitted) {
      const { admitted: _admitted, ...refusal } = admission;
      this.logger.warn({ organizationId, ...refusal }, `outbound call refused: ${refusal.reason}`);
      return { placed: false, refusal };
    }
    const callSid = await this.dial(admission.call, body, rest);
    await this.calls.attachTwilioCallSid(admission.call.id, callSid);
    this.logger.info({ callId: admission.call.id, callSid, agentId: agent.id }, 'outbound call placed');
    return { placed: true, call: (await this.calls.findForOrganization(organizationId, admission.call.id)) ?? admission.call };
  }

  /** Asks Twilio to dial; on refusal the reserved call is failed and finalised before the 502. */
  private async dial(call: CallRecord, body: PlaceCallBody, rest: TwilioRestCredentials): Promise<string> {
    const base = this.config.publicBaseUrl;
    try {
      const created = await this.twilioRest.forAccount(rest).calls.create({
        to: body.to,
        from: body.from,
        url: webhookUrl(base, `/twilio/outbound/${call.id}`),
        method: 'POST',
        statusCallback: webhookUrl(base, '/twilio/status'),
        statusCallbackMethod: 'POST',
        statusCallbackEvent: STATUS_CALLBACK_EVENTS,
        ...(body.machineDetection !== undefined && {
          machineDetection: body.machineDetection,
          // Asynchronous: the callee hears the agent at once instead of silence while detection runs.
          asyncAmd: 'true',
          asyncAmdStatusCallback: webhookUrl(base, '/twilio/amd'),
          asyncAmdStatusCallbackMethod: 'POST',
        }),
      });
      return created.sid;
    } catch (error) {
      const failure = describeTwilioFailure(error);
      const at = new Date();
      this.logger.error({ callId: call.id, twilio: failure }, 'Twilio refused to place the outbound call');
      await this.calls.markOutboundFailed(call.id, at);
      await this.callEvents.append(call.id, { type: 'twilio_error', at, payload: { operation: 'calls.create', ...failure } });
      await this.callEnds.finalise(call.id, { endReason: 'twilio_error', endedAt: at });
      throw twilioRefused('place the call', call.id, failure);
    }
  }

  /**
   * Hangs up one of the organization's calls through Twilio (status=completed ends a call whether
   * it is ringing or answered; a call Twilio already ended counts as hung up) and finalises it with
   * end reason 'api_hangup', which frees its place under the concurrency limit at once.
   */
  async hangUp(organizationId: string, callId: string): Promise<CallRecord> {
    const call = await this.calls.findForOrganization(organizationId, callId);
    if (!call) throw callNotFound(callId);
    if (call.endReason !== null || call.endedAt !== null) throw callAlreadyEnded(callId);
    if (call.direction === 'web' || call.twilioAccountSid === null) throw webCallHangUp(callId);
    if (call.twilioCallSid === null) throw callNotPlacedYet(callId);
    // The call's own account, whichever it was placed or answered with.
    const rest = this.twilioAccounts.restCredentials(await this.twilioAccounts.forAccountSid(call.twilioAccountSid));
    if (!rest) throw twilioNotConfigured();

    const at = new Date();
    await this.callEvents.append(call.id, { type: 'hangup_requested', at, payload: { by: 'api', status: call.status } });
    try {
      await this.twilioRest.callControlFor(rest, call.twilioCallSid).hangUp('api');
    } catch (error) {
      // TwilioCallControl keeps Twilio's own answer as the cause; a transport failure has none.
      const cause = error instanceof CallControlError ? error.cause : error;
      const failure = cause === undefined ? { httpStatus: null, code: null, message: (error as Error).message } : describeTwilioFailure(cause);
      this.logger.error({ callId, twilio: failure }, 'Twilio refused to hang up the call');
      throw twilioRefused('hang up the call', callId, failure);
    }
    await this.callEnds.finalise(call.id, { endReason: 'api_hangup', endedAt: at });
    this.logger.info({ callId, callSid: call.twilioCallSid }, 'call hung up through the API');
    return (await this.calls.findForOrganization(organizationId, callId)) ?? call;
  }
}
