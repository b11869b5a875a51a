import { CAMPAIGN_CONTACT_STATUSES, type Campaign } from '../api';

/** What a status reason means, in words (the API's codes otherwise). */
const REASONS: Record<string, string> = {
  api: 'by an admin',
  budget_exceeded: 'the monthly budget is spent',
  agent_not_found: 'its agent was deleted',
  from_number_not_owned: 'its number is no longer the organization’s',
  twilio_not_configured: 'no Twilio account to call with',
  all_contacts_done: 'all contacts done',
  schedule_ended: 'the schedule ended',
};

/** "paused (by an admin)", "completed (all contacts done)". */
export function campaignStatusText(campaign: Pick<Campaign, 'status' | 'statusReason'>): string {
  if (campaign.statusReason === null) return campaign.status;
  return `${campaign.status} (${REASONS[campaign.statusReason] ?? campaign.statusReason.replace(/_/g, ' ')})`;
}

/**
 * The contacts by status as one stacked bar (done, dialing, cancelled, pending) and "done of total":
 * a contact is done once its last attempt is over, whatever the outcome.
 */
export function CampaignProgressBar({ progress, testId }: { progress: Campaign['progress']; testId?: string }) {
  const { total, byStatus } = progress;
  const share = (count: number) => (total === 0 ? 0 : (count / total) * 100);
  const order = ['done', 'dialing', 'cancelled', 'pending'] as const;
  return (
    <div className="campaign-progress" data-testid={testId}>
      <div className="progress-bar" role="img" aria-label={CAMPAIGN_CONTACT_STATUSES.map((status) => `${byStatus[status]} ${status}`).join(', ')}>
        {order.map((status) => byStatus[status] > 0 && <span key={status} className={`segment ${status}`} style={{ width: `${share(byStatus[status])}%` }} />)}
      </div>
      <span className="progress-text">
        {byStatus.done}/{total} done
        {byStatus.dialing > 0 && `, ${byStatus.dialing} dialing`}
        {byStatus.cancelled > 0 && `, ${byStatus.cancelled} cancelled`}
      </span>
    </div>
  );
}
