import { ErrorAlert } from '../components/error-alert';
import { useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import {
  api,
  CAMPAIGN_CONTACT_STATUSES,
  CAMPAIGN_OUTCOMES,
  messageOf,
  type AgentDetail,
  type Campaign,
  type CampaignContact,
  type CampaignContactStatus,
  type Page,
} from '../api';
import { BarChart } from '../components/bar-chart';
import { CampaignProgressBar, campaignStatusText } from '../components/campaign-progress';
import { formatInZone, windowsText } from '../campaign-form';
import { canWrite, useSession } from '../session';

/** While the campaign runs (or a call of it is in progress) the page reads it again this often. */
const REFRESH_MS = 3_000;
const CONTACTS_PAGE_SIZE = 50;

const OUTCOME_NAMES: Record<(typeof CAMPAIGN_OUTCOMES)[number], string> = { answered: 'answered', voicemail: 'voicemail', no_answer: 'no answer', busy: 'busy', failed: 'failed' };

function active(campaign: Campaign): boolean {
  return campaign.status === 'running' || campaign.progress.byStatus.dialing > 0;
}

/**
 * One campaign: its settings, its progress by contact status and outcome, and its contacts (each
 * with the calls made to it), a page at a time and filtered by status. Admins pause, resume and
 * cancel it. The page follows the campaign every 3 s while it is running.
 */
export function CampaignPage() {
  const { id = '' } = useParams();
  const { session } = useSession();
  const [campaign, setCampaign] = useState<Campaign>();
  const [agentName, setAgentName] = useState<string>();
  const [contacts, setContacts] = useState<Page<CampaignContact>>();
  const [filter, setFilter] = useState<CampaignContactStatus | ''>('');
  /** Cursors of the pages before the one shown (the first page has none), and the shown page's. */
  const [cursors, setCursors] = useState<Array<string | undefined>>([]);
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<string>();
  const [actionError, setActionError] = useState<string>();
  const [acting, setActing] = useState(false);
  /** Bumped to read the campaign and its contacts again now (after an action). */
  const [reloads, setReloads] = useState(0);

  useEffect(() => {
    if (!session) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const query = new URLSearchParams({ limit: String(CONTACTS_PAGE_SIZE) });
    if (filter !== '') query.set('status', filter);
    if (cursor !== undefined) query.set('cursor', cursor);
    /** Whether this loop has read the campaign: a later failure (a server restarting) is tried again, a first one is shown. */
    let loaded = false;
    const load = async () => {
      try {
        const [detail, page] = await Promise.all([
          api<Campaign>(`/v1/campaigns/${encodeURIComponent(id)}`, { key: session.key }),
          api<Page<CampaignContact>>(`/v1/campaigns/${encodeURIComponent(id)}/contacts?${query.toString()}`, { key: session.key }),
        ]);
        if (stopped) return;
        setCampaign(detail);
        setContacts(page);
        setError(undefined);
        loaded = true;
        if (active(detail)) timer = setTimeout(() => void load(), REFRESH_MS);
      } catch (caught) {
        if (stopped) return;
        setError(messageOf(caught));
        if (loaded) timer = setTimeout(() => void load(), REFRESH_MS);
      }
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id, session, filter, cursor, reloads]);

  const agentId = campaign?.agentId;
  useEffect(() => {
    if (!session || agentId === undefined) return;
    let live = true;
    api<AgentDetail>(`/v1/agents/${encodeURIComponent(agentId)}`, { key: session.key }).then(
      (agent) => live && setAgentName(agent.name),
      () => live && setAgentName(undefined),
    );
    return () => {
      live = false;
    };
  }, [agentId, session]);

  // Keyed by the counts, not the object: a refresh with the same counts does not redraw the chart.
  const outcomeCounts = campaign ? CAMPAIGN_OUTCOMES.map((outcome) => campaign.progress.byOutcome[outcome]).join(',') : '';
  const outcomeChart = useMemo(() => ({ categories: CAMPAIGN_OUTCOMES.map((outcome) => OUTCOME_NAMES[outcome]), values: outcomeCounts.split(',').map(Number) }), [outcomeCounts]);

  if (!session) return null;
  if (!campaign) return error ? <ErrorAlert message={error} /> : <p className="empty">Loading…</p>;

  const act = async (action: 'pause' | 'resume' | 'cancel') => {
    if (action === 'cancel' && !window.confirm(`Cancel ${campaign.name}? Its pending contacts are cancelled (calls in progress go on to their end), and it cannot be resumed.`)) return;
    setActing(true);
    setActionError(undefined);
    try {
      setCampaign(await api<Campaign>(`/v1/campaigns/${encodeURIComponent(campaign.id)}/${action}`, { key: session.key, method: 'POST' }));
      setReloads((count) => count + 1);
    } catch (caught) {
      setActionError(messageOf(caught));
    } finally {
      setActing(false);
    }
  };
  const chooseFilter = (next: CampaignContactStatus | '') => {
    setFilter(next);
    setCursors([]);
    setCursor(undefined);
  };

  const { progress, schedule, retry } = campaign;
  const retried = [retry.onBusy && 'busy', retry.onNoAnswer && 'no answer', retry.onVoicemail && 'voicemail'].filter(Boolean).join(', ');
  const writer = canWrite(session);
  return (
    <section className="campaign-page">
      <p>
        <Link to="/campaigns">← Campaigns</Link>
      </p>
      <div className="section-head">
        <h1>{campaign.name}</h1>
        {writer && (campaign.status === 'running' || campaign.status === 'paused') && (
          <span className="actions">
            {campaign.status === 'running' ? (
              <button type="button" disabled={acting} onClick={() => void act('pause')}>
                Pause
              </button>
            ) : (
              <button type="button" className="primary" disabled={acting} onClick={() => void act('resume')}>
                Resume
              </button>
            )}
            <button type="button" className="danger" disabled={acting} onClick={() => void act('cancel')}>
              Cancel campaign
            </button>
          </span>
        )}
      </div>
      <ErrorAlert message={actionError} />
      {error && <ErrorAlert message={`Could not refresh: ${error}`} />}
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <span className={`status ${campaign.status}`} data-testid="campaign-status">
            {campaignStatusText(campaign)}
          </span>
          {active(campaign) && <span className="hint"> · updated every {REFRESH_MS / 1000} s</span>}
        </dd>
        <dt>Agent</dt>
        <dd>
          <Link to={`/agents/${campaign.agentId}`}>{agentName ?? campaign.agentId}</Link>
        </dd>
        <dt>From</dt>
        <dd>{campaign.from}</dd>
        <dt>Schedule</dt>
        <dd data-testid="campaign-schedule">
          {schedule.timeZone}: from {formatInZone(schedule.start, schedule.timeZone)}
          {schedule.end === null ? ', no end' : ` to ${formatInZone(schedule.end, schedule.timeZone)}`}
        </dd>
        <dt>Calling windows</dt>
        <dd>{windowsText(schedule.windows)} (each contact's local time)</dd>
        <dt>Calls at once</dt>
        <dd>at most {campaign.maxConcurrentCalls}</dd>
        <dt>Retries</dt>
        <dd>
          {retry.maxAttempts} attempt{retry.maxAttempts === 1 ? '' : 's'} per contact
          {retried === '' ? ', none retried' : `; ${retried} tried again after ${retry.delaySeconds} s`}
        </dd>
        <dt>Machine detection</dt>
        <dd>{campaign.machineDetection ?? 'none'}</dd>
        <dt>Voicemail</dt>
        <dd>{campaign.voicemail.mode === 'message' ? <q>{campaign.voicemail.message}</q> : campaign.voicemail.mode === 'agent' ? "the agent's default" : 'none'}</dd>
        <dt>Created</dt>
        <dd>
          {new Date(campaign.createdAt).toLocaleString()}
          {campaign.completedAt && `; finished ${new Date(campaign.completedAt).toLocaleString()}`}
        </dd>
      </dl>

      <h2>Progress</h2>
      <CampaignProgressBar progress={progress} testId="campaign-progress" />
      <div className="counts">
        <table data-testid="counts-by-status">
          <thead>
            <tr>
              <th>Contacts</th>
              <th>{progress.total}</th>
            </tr>
          </thead>
          <tbody>
            {CAMPAIGN_CONTACT_STATUSES.map((status) => (
              <tr key={status} data-status={status}>
                <td>
                  <span className={`swatch ${status}`} /> {status}
                </td>
                <td>{progress.byStatus[status]}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <table data-testid="counts-by-outcome">
          <thead>
            <tr>
              <th>Done, by outcome</th>
              <th>{progress.byStatus.done}</th>
            </tr>
          </thead>
          <tbody>
            {CAMPAIGN_OUTCOMES.map((outcome) => (
              <tr key={outcome} data-outcome={outcome}>
                <td>{OUTCOME_NAMES[outcome]}</td>
                <td>{progress.byOutcome[outcome]}</td>
              </tr>
            ))}
            <tr>
              <td>calls placed</td>
              <td>{progress.attempts}</td>
            </tr>
          </tbody>
        </table>
      </div>
      {progress.byStatus.done > 0 && <BarChart testId="outcomes-chart" categories={outcomeChart.categories} values={outcomeChart.values} unit="contacts" />}

      <div className="section-head contacts-head">
        <h2>Contacts</h2>
        <label className="inline">
          Status
          <select aria-label="Filter contacts by status" value={filter} onChange={(event) => chooseFilter(event.target.value as CampaignContactStatus | '')}>
            <option value="">all</option>
            {CAMPAIGN_CONTACT_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
      </div>
      {contacts && contacts.data.length === 0 && <p className="empty">{filter === '' ? 'No contacts.' : `No ${filter} contacts.`}</p>}
      {contacts && contacts.data.length > 0 && (
        <table data-testid="contacts-table">
          <thead>
            <tr>
              <th>#</th>
              <th>To</th>
              <th>Time zone</th>
              <th>Status</th>
              <th>Outcome</th>
              <th>Attempts</th>
              <th>Calls</th>
            </tr>
          </thead>
          <tbody>
            {contacts.data.map((contact) => (
              <tr key={contact.id} data-contact-to={contact.to}>
                <td>{contact.position}</td>
                <td>{contact.to}</td>
                <td>{contact.timeZone}</td>
                <td className="contact-status">
                  {contact.status}
                  {contact.status === 'pending' && contact.attempts > 0 && <span className="hint"> (next try {new Date(contact.nextAttemptAt).toLocaleString()})</span>}
                </td>
                <td>{contact.outcome === null ? '—' : OUTCOME_NAMES[contact.outcome]}</td>
                <td>{contact.attempts}</td>
                <td>
                  {contact.calls.length === 0
                    ? '—'
                    : contact.calls.map((call) => (
                        <Link key={call.id} to={`/calls/${call.id}`} className="call-link">
                          #{call.attempt} {call.endedAt === null ? `${call.status} (live)` : call.status}
                        </Link>
                      ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(cursors.length > 0 || contacts?.nextCursor) && (
        <div className="pager">
          <button
            type="button"
            disabled={cursors.length === 0}
            onClick={() => {
              setCursor(cursors[cursors.length - 1]);
              setCursors((previous) => previous.slice(0, -1));
            }}
          >
            ← Previous
          </button>
          <span className="hint">Page {cursors.length + 1}</span>
          <button
            type="button"
            disabled={!contacts?.nextCursor}
            onClick={() => {
              if (!contacts?.nextCursor) return;
              setCursors((previous) => [...previous, cursor]);
              setCursor(contacts.nextCursor);
            }}
          >
            Next →
          </button>
        </div>
      )}
    </section>
  );
}
