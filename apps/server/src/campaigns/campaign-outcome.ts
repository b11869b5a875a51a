import type { AttemptResolution, CampaignCallFacts, CampaignOutcome, CampaignRecord } from '@switchboard/persistence';

/**
 * How an attempt went, read from its call once the call is over. Twilio's final status decides
 * when it has one; a call Switchboard ended first (the media path, a hang-up through the API, a
 * refusal by Twilio) is read from what happened to it:
 *  - a machine answered (asynchronous detection said machine_*): voicemail;
 *  - completed: answered; busy: busy; no-answer: no_answer; failed or canceled: failed;
 *  - ended by us before Twilio's final status: answered if it was answered (or its stream
 *    started), else failed (never reached anyone: Twilio refused it, it was hung up while ringing).
 */
export function outcomeOfCall(call: CampaignCallFacts): CampaignOutcome {
  if (call.answeredBy !== null && call.answeredBy.startsWith('machine')) return 'voicemail';
  switch (call.status) {
    case 'completed':
      return 'answered';
    case 'busy':
      return 'busy';
    case 'no-answer':
      return 'no_answer';
    case 'failed':
    case 'canceled':
      return 'failed';
    default:
      return call.answeredAt !== null || call.streamStartedAt !== null ? 'answered' : 'failed';
  }
}

/**
 * What follows an attempt's outcome: another attempt after the retry delay when the campaign retries
 * that outcome, attempts are left, the campaign is not cancelled and the next attempt falls before
 * its end; otherwise the contact is done with this outcome.
 */
export function resolveAttempt(campaign: CampaignRecord, outcome: CampaignOutcome, attempt: number, now: Date): AttemptResolution {
  const retried =
    (outcome === 'busy' && campaign.retry.onBusy) ||
    (outcome === 'no_answer' && campaign.retry.onNoAnswer) ||
    (outcome === 'voicemail' && campaign.retry.onVoicemail);
  if (!retried || attempt >= campaign.retry.maxAttempts || campaign.status === 'cancelled' || campaign.status === 'completed') return { status: 'done' };
  const at = new Date(now.getTime() + campaign.retry.delaySeconds * 1000);
  if (campaign.endAt !== null && at >= campaign.endAt) return { status: 'done' };
  return { status: 'pending', at };
}
