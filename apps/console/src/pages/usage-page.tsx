import { ErrorAlert } from '../components/error-alert';
import { useEffect, useState } from 'react';
import { api, messageOf } from '../api';
import { BarChart } from '../components/bar-chart';
import { inferenceCapacityText, type InferenceCapacity } from '../inference-capacity-text';
import { formatTotal, microsOf } from '../money';
import { useSession } from '../session';

interface UsageRow {
  group: string | null;
  label: string | null;
  currency: string;
  calls: number;
  amountMicros: number;
  amount: string;
}

interface UsageReport {
  from: string;
  to: string;
  data: UsageRow[];
  totals: Array<{ currency: string; calls: number; amount: string }>;
}

interface Organization {
  activeCalls: number;
  effectiveMaxConcurrentCalls: number;
  refusedCallsLast24h: number;
  refusedCallsTotal: number;
  inferenceCapacity: InferenceCapacity;
  budget: { monthlyBudget: string | null; hardLimit: boolean; currency: string; month: string; spent: string };
}

const MICROS = 1_000_000;

/** This month's spend per day and per agent, the budget, and the report as CSV. */
export function UsagePage() {
  const { session } = useSession();
  const [byDay, setByDay] = useState<UsageReport>();
  const [byAgent, setByAgent] = useState<UsageReport>();
  const [organization, setOrganization] = useState<Organization>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    if (!session) return;
    Promise.all([
      api<UsageReport>('/v1/usage?groupBy=day', { key: session.key }),
      api<UsageReport>('/v1/usage?groupBy=agent', { key: session.key }),
      api<Organization>('/v1/organization', { key: session.key }),
    ])
      .then(([day, agent, org]) => {
        setByDay(day);
        setByAgent(agent);
        setOrganization(org);
      })
      .catch((caught: unknown) => setError(messageOf(caught)));
  }, [session]);

  // CSV through fetch: a plain link could not send the key.
  const download = async (groupBy: 'day' | 'agent' | 'component') => {
    if (!session) return;
    const response = await fetch(`/v1/usage?groupBy=${groupBy}&format=csv`, { headers: { authorization: `Bearer ${session.key}` } });
    if (!response.ok) return setError(`The CSV could not be made (HTTP ${response.status}).`);
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement('a');
    link.href = url;
    link.download = `usage-${groupBy}.csv`;
    link.click();
    URL.revokeObjectURL(url);
  };

  if (error) return <ErrorAlert message={error} />;
  if (!byDay || !byAgent || !organization) return <p className="empty">Loading…</p>;
  const { budget } = organization;
  const currency = budget.currency;
  return (
    <section>
      <div className="section-head">
        <h1>Usage</h1>
        <span className="actions">
          <button type="button" onClick={() => void download('day')}>
            Download CSV (per day)
          </button>
          <button type="button" onClick={() => void download('agent')}>
            per agent
          </button>
          <button type="button" onClick={() => void download('component')}>
            per component
          </button>
        </span>
      </div>
      <dl className="facts" data-testid="budget">
        <dt>This month ({budget.month})</dt>
        <dd>
          <span title={`${budget.spent} ${currency}`}>{formatTotal(microsOf(budget.spent), currency)}</span> spent
          {budget.monthlyBudget === null ? ', no budget set' : ` of a ${formatTotal(microsOf(budget.monthlyBudget), currency)} budget${budget.hardLimit ? ' (new calls are refused once it is spent)' : ''}`}
        </dd>
        <dt>Calls now</dt>
        <dd>
          {organization.activeCalls} live of {organization.effectiveMaxConcurrentCalls} allowed at once
        </dd>
        <dt>Calls refused</dt>
        <dd data-testid="refused-calls">
          {organization.refusedCallsLast24h} in the last 24 hours, {organization.refusedCallsTotal} in all (over the limit, the hard budget or the inference capacity)
        </dd>
        <dt>Inference, this server</dt>
        <dd data-testid="inference-capacity">{inferenceCapacityText(organization.inferenceCapacity)}</dd>
      </dl>
      <h2>Spend per day</h2>
      {byDay.data.length === 0 ? (
        <p className="empty">No priced calls this month.</p>
      ) : (
        <BarChart testId="spend-per-day" categories={byDay.data.map((row) => row.group ?? '?')} values={byDay.data.map((row) => row.amountMicros / MICROS)} unit={currency} />
      )}
      <h2>Spend per agent</h2>
      {byAgent.data.length === 0 ? (
        <p className="empty">No priced calls this month.</p>
      ) : (
        <BarChart testId="spend-per-agent" categories={byAgent.data.map((row) => row.label ?? '(deleted agent)')} values={byAgent.data.map((row) => row.amountMicros / MICROS)} unit={currency} />
      )}
    </section>
  );
}
