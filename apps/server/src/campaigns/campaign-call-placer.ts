import { AGENT_NOT_READY } from '../agents-api/agent-not-ready';
import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { PersistenceError, type CampaignRecord, type ClaimedCampaignContact } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import type { PlaceCallBody } from '../calls/outbound-call-requests.schema';
import { OutboundCallService } from '../calls/outbound-call.service';

/** A contact refused under the organization's concurrency limit is due again after this. */
export const CONCURRENCY_RETRY_DELAY_MS = 5_000;
const BAD_REQUEST: number = HttpStatus.BAD_REQUEST;
const BAD_GATEWAY: number = HttpStatus.BAD_GATEWAY;
/** After an unexpected failure before the call row was written, the attempt is given back for this long. */
const FAILURE_RETRY_DELAY_MS = 30_000;

/**
 * What became of one claimed attempt:
 *  - placed: the call row exists (Twilio dialled, or refused and the call is recorded as failed with
 *    its outcome), or another process placed this attempt: its call decides the contact's outcome;
 *  - retry_later: not placed, the contact is given back after `delayMs` (`stopsOthers`: the organization
 *    is at its limit, so the rest of the tick's contacts would be refused too);
 *  - pause: not placed, and no call of the campaign can be until someone acts (hard budget reached,
 *    the agent or the number is gone, Twilio is not configured, the voicemail settings no longer fit).
 */
export type PlacementResult = { kind: 'placed' } | { kind: 'retry_later'; delayMs: number; stopsOthers: boolean } | { kind: 'pause'; reason: string };

/**
 * Places one campaign attempt through OutboundCallService.place, the path of POST /v1/calls: the
 * same checks (agent, caller number, voicemail), the same admission under the organization's
 * concurrency limit and budget, and the same Twilio placement with the organization's account.
 */
@Injectable()
export class CampaignCallPlacer {
  constructor(
    private readonly outbound: OutboundCallService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CampaignCallPlacer.name);
  }

  async place(campaign: CampaignRecord, contact: ClaimedCampaignContact): Promise<PlacementResult> {
    try {
      const outcome = await this.outbound.place(campaign.organizationId, callBody(campaign, contact), { contactId: contact.id, attempt: contact.attempt });
      if (outcome.placed) return { kind: 'placed' };
      if (outcome.refusal.reason === 'budget_exceeded') return { kind: 'pause', reason: 'budget_exceeded' };
      // Over the concurrency limit or this instance's inference capacity: both free up as calls end.
      return { kind: 'retry_later', delayMs: CONCURRENCY_RETRY_DELAY_MS, stopsOthers: true };
    } catch (error) {
      return this.failed(campaign, contact, error);
    }
  }

  private failed(campaign: CampaignRecord, contact: ClaimedCampaignContact, error: unknown): PlacementResult {
    const context = { campaignId: campaign.id, contactId: contact.id, attempt: contact.attempt };
    if (error instanceof PersistenceError && error.code === 'conflict') {
      // The unique (contact, attempt) of the call row: another process placed this attempt first.
      this.logger.warn(context, 'campaign attempt already placed by another process');
      return { kind: 'placed' };
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      const body = error.getResponse();
      const code = typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string' ? (body as { code: string }).code : `http_${status}`;
      // Twilio refused this number: the call is recorded as failed, and its outcome with it.
      if (status === BAD_GATEWAY) return { kind: 'placed' };
      // The agent or number is gone, the agent is not ready, the voicemail no longer fits the agent, no Twilio account: every
      // call of the campaign would fail the same way until someone fixes it.
      if (status === BAD_REQUEST || code === 'twilio_not_configured' || code === AGENT_NOT_READY) return { kind: 'pause', reason: code };
    }
    this.logger.error({ ...context, err: error }, 'campaign call not placed; the attempt is given back');
    return { kind: 'retry_later', delayMs: FAILURE_RETRY_DELAY_MS, stopsOthers: false };
  }
}

/** The POST /v1/calls body of a campaign's call: the contact's number and variables, the campaign's detection and voicemail. */
function callBody(campaign: CampaignRecord, contact: ClaimedCampaignContact): PlaceCallBody {
  return {
    agentId: campaign.agentId,
    from: campaign.fromNumber,
    to: contact.to,
    variables: contact.variables,
    ...(campaign.machineDetection !== null && { machineDetection: campaign.machineDetection }),
    ...(campaign.voicemail.mode === 'none' && { voicemail: null }),
    ...(campaign.voicemail.mode === 'message' && campaign.voicemail.message !== null && { voicemail: { message: campaign.voicemail.message } }),
  };
}
