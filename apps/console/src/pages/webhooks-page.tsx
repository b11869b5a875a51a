import { ErrorAlert } from '../components/error-alert';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, messageOf, ApiError, type Page } from '../api';
import { canWrite, useSession } from '../session';

/** What the server can send (its WEBHOOK_EVENT_TYPES). */
const EVENT_TYPES = ['call.started', 'call.answered', 'call.ended', 'transcript.turn', 'tool.invoked', 'call.cost', 'usage.threshold', 'call.analyzed', 'campaign.completed'] as const;

interface Subscription {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdAt: string;
}

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  status: 'pending' | 'delivered' | 'failed';
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt?: string;
  lastAttemptAt: string | null;
}

interface Attempt {
  attemptNumber: number;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
}

/** Subscriptions (admins add and remove them), the delivery log with every attempt, and replay. */
export function WebhooksPage() {
  const { session } = useSession();
  const [subscriptions, setSubscriptions] = useState<Subscription[]>();
  const [deliveries, setDeliveries] = useState<Delivery[]>();
  const [opened, setOpened] = useState<{ id: string; attempts: Attempt[] }>();
  const [createdSecret, setCreatedSecret] = useState<string>();
  const [error, setError] = useState<string>();

  const load = useCallback(async () => {
    if (!session) return;
    try {
      const [subs, log] = await Promise.all([
        api<{ data: Subscription[] }>('/v1/webhook-subscriptions', { key: session.key }),
        api<Page<Delivery>>('/v1/webhook-deliveries?limit=50', { key: session.key }),
      ]);
      setSubscriptions(subs.data);
      setDeliveries(log.data);
    } catch (caught) {
      setError(messageOf(caught));
    }
  }, [session]);

  useEffect(() => {
    void load();
  }, [load]);

  if (!session) return null;
  const writer = canWrite(session);

  const remove = async (id: string) => {
    await api(`/v1/webhook-subscriptions/${id}`, { key: session.key, method: 'DELETE' });
    void load();
  };
  const open = async (id: string) => {
    const detail = await api<{ attempts: Attempt[] }>(`/v1/webhook-deliveries/${id}`, { key: session.key });
    setOpened({ id, attempts: detail.attempts });
  };
  const replay = async (id: string) => {
    try {
      await api(`/v1/webhook-deliveries/${id}/replay`, { key: session.key, method: 'POST' });
      void load();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <section>
      <div className="section-head">
        <h1>Webhooks</h1>
      </div>
      <ErrorAlert message={error} />
      {writer && (
        <NewSubscriptionForm
          apiKey={session.key}
          onCreated={(secret) => {
            setCreatedSecret(secret);
            void load();
          }}
        />
      )}
      {createdSecret && (
        <div className="card wide secret-card">
          <p>
            The subscription's signing secret, shown <strong>only now</strong> (deliveries are signed with it, Standard Webhooks):
          </p>
          <code data-testid="webhook-secret">{createdSecret}</code>
        </div>
      )}

      <h2>Subscriptions</h2>
      {subscriptions && subscriptions.length === 0 && <p className="empty">No subscriptions.</p>}
      {subscriptions && subscriptions.length > 0 && (
        <table data-testid="subscriptions">
          <thead>
            <tr>
              <th>URL</th>
              <th>Events</th>
              <th>Description</th>
              {writer && <th />}
            </tr>
          </thead>
          <tbody>
            {subscriptions.map((subscription) => (
              <tr key={subscription.id}>
                <td>
                  <code>{subscription.url}</code>
                </td>
                <td>{subscription.events.join(', ')}</td>
                <td>{subscription.description ?? ''}</td>
                {writer && (
                  <td>
                    <button type="button" className="link" onClick={() => void remove(subscription.id)}>
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Delivery log</h2>
      {deliveries && deliveries.length === 0 && <p className="empty">Nothing sent yet.</p>}
      {deliveries && deliveries.length > 0 && (
        <table data-testid="deliveries">
          <thead>
            <tr>
              <th>Event</th>
              <th>Status</th>
              <th>Attempts</th>
              <th>Last answer</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr key={delivery.id} data-delivery-id={delivery.id}>
                <td>{delivery.eventType}</td>
                <td className={delivery.status === 'failed' ? 'error' : ''}>{delivery.status}</td>
                <td>{delivery.attemptCount}</td>
                <td>{delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
                <td>
                  <button type="button" className="link" onClick={() => void open(delivery.id)}>
                    Attempts
                  </button>
                  {writer && (
                    <button type="button" className="link" onClick={() => void replay(delivery.id)}>
                      Replay
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {opened && (
        <>
          <h2>Attempts of delivery {opened.id.slice(0, 8)}…</h2>
          <table data-testid="attempts">
            <thead>
              <tr>
                <th>#</th>
                <th>At</th>
                <th>Status</th>
                <th>Latency</th>
                <th>Error</th>
                <th>Response</th>
              </tr>
            </thead>
            <tbody>
              {opened.attempts.map((attempt) => (
                <tr key={attempt.attemptNumber}>
                  <td>{attempt.attemptNumber}</td>
                  <td>{new Date(attempt.startedAt).toLocaleTimeString()}</td>
                  <td>{attempt.statusCode ?? '—'}</td>
                  <td>{Math.round(attempt.latencyMs)} ms</td>
                  <td>{attempt.error ?? ''}</td>
                  <td>
                    <code>{attempt.responseExcerpt ?? ''}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function NewSubscriptionForm({ apiKey, onCreated }: { apiKey: string; onCreated(secret: string): void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['call.ended']);
  const [error, setError] = useState<string>();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const created = await api<{ secret: string }>('/v1/webhook-subscriptions', { key: apiKey, method: 'POST', body: { url, events } });
      setUrl('');
      onCreated(created.secret);
    } catch (caught) {
      setError(caught instanceof ApiError && caught.details.length > 0 ? caught.details.map((problem) => `${problem.field}: ${problem.message}`).join('; ') : messageOf(caught));
    }
  };

  return (
    <form className="card form" onSubmit={(event) => void submit(event)} data-testid="new-subscription-form">
      <h2>New subscription</h2>
      <label>
        URL
        <input name="url" value={url} onChange={(event) => setUrl(event.target.value)} placeholder="https://example.com/switchboard" />
      </label>
      <fieldset className="events">
        <legend>Events</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} className="inline">
            <input
              type="checkbox"
              checked={events.includes(type)}
              onChange={(event) => setEvents((current) => (event.target.checked ? [...current, type] : current.filter((existing) => existing !== type)))}
            />
            {type}
          </label>
        ))}
      </fieldset>
      <ErrorAlert message={error} />
      <button type="submit" className="primary">
        Add
      </button>
    </form>
  );
}
