import { ErrorAlert } from '../components/error-alert';
import { useCallback, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, messageOf, type AgentSummary, type Campaign, type Page } from '../api';
import { CampaignProgressBar, campaignStatusText } from '../components/campaign-progress';
import { canWrite, useSession } from '../session';

const PAGE_SIZE = 50;

/** Outbound campaigns, newest first, with their progress; admins start a new one from here. */
export function CampaignsPage() {
  const { session } = useSession();
  const [campaigns, setCampaigns] = useState<Campaign[]>();
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [agentNames, setAgentNames] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string>();

  const load = useCallback(
    async (cursor?: string) => {
      if (!session) return;
      try {
        const [page, agents] = await Promise.all([
          api<Page<Campaign>>(`/v1/campaigns?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: session.key }),
          cursor ? undefined : api<Page<AgentSummary>>('/v1/agents?limit=100', { key: session.key }),
        ]);
        setCampaigns((current) => (cursor ? [...(current ?? []), ...page.data] : page.data));
        setNextCursor(page.nextCursor);
        if (agents) setAgentNames(new Map(agents.data.map((agent) => [agent.id, agent.name])));
      } catch (caught) {
        setError(messageOf(caught));
      }
    },
    [session],
  );

  useEffect(() => {
    void load();
  }, [load]);

  if (!session) return null;
  return (
    <section>
      <div className="section-head">
        <h1>Campaigns</h1>
        {canWrite(session) && (
          <Link to="/campaigns/new" className="button primary">
            New campaign
          </Link>
        )}
      </div>
      <ErrorAlert message={error} />
      {campaigns && campaigns.length === 0 && (
        <div className="empty" data-testid="campaigns-empty">
          <p>No campaigns yet.</p>
          <p>
            A campaign calls a list of contacts with one of your agents. It needs an <Link to="/agents">agent</Link> to talk, a phone number of yours
            to call from (bind one to an agent on the Agents page; calls go out through your Twilio account), and the contacts: a CSV with a{' '}
            <code>to</code> column of E.164 numbers, optionally <code>timeZone</code> and variables for the agent&apos;s prompt.
          </p>
        </div>
      )}
      {campaigns && campaigns.length > 0 && (
        <table data-testid="campaigns-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Agent</th>
              <th>Status</th>
              <th>Progress</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {campaigns.map((campaign) => (
              <tr key={campaign.id} data-campaign-id={campaign.id}>
                <td>
                  <Link to={`/campaigns/${campaign.id}`}>{campaign.name}</Link>
                </td>
                <td>{agentNames.get(campaign.agentId) ?? <code>{campaign.agentId.slice(0, 8)}…</code>}</td>
                <td>
                  <span className={`status ${campaign.status}`}>{campaignStatusText(campaign)}</span>
                </td>
                <td>
                  <CampaignProgressBar progress={campaign.progress} />
                </td>
                <td>{new Date(campaign.createdAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {nextCursor && (
        <p>
          <button type="button" onClick={() => void load(nextCursor)}>
            More campaigns
          </button>
        </p>
      )}
    </section>
  );
}
