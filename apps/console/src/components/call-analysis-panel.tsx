import { useState } from 'react';
import { api, ApiError, messageOf, type AnalysisQueued, type CallAnalysis } from '../api';
import { ErrorAlert } from './error-alert';

/** A value of the structured data as one table cell: text as it is, anything else (numbers, lists, objects) as compact JSON. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The data the analysis extracted (the agent's analysis.structuredData schema): one row per top-level field. */
function StructuredData({ data }: { data: unknown }) {
  if (data === null || data === undefined) return null;
  if (!isRecord(data)) {
    // Not an object (the model's answer did not match the schema): shown as it came.
    return (
      <p>
        <code>{valueText(data)}</code>
      </p>
    );
  }
  const entries = Object.entries(data);
  if (entries.length === 0) return <p className="empty">No structured data.</p>;
  return (
    <table className="analysis-data" data-testid="analysis-data">
      <thead>
        <tr>
          <th>Field</th>
          <th>Value</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([field, value]) => (
          <tr key={field}>
            <td>
              <code>{field}</code>
            </td>
            <td>{typeof value === 'string' ? value : <code>{valueText(value)}</code>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function tokensInWords(analysis: CallAnalysis): string {
  return `${analysis.inputTokens.toLocaleString()} input + ${analysis.outputTokens.toLocaleString()} output tokens`;
}

/**
 * A call's post-call analysis (agent config `analysis`): the summary, the success verdict with its
 * reason, the extracted structured data (and why it does not match the schema, when it does not),
 * or why the analysis failed. The page refreshes the call while the analysis is queued or running
 * (`polling`); when it gives up, Refresh asks again. Admin keys may re-run the analysis with the
 * agent's current settings.
 */
export function CallAnalysisPanel({
  apiKey,
  callId,
  analysis,
  ended,
  polling,
  writable,
  onRefresh,
  onQueued,
}: {
  apiKey: string;
  callId: string;
  /** Null when the call's agent does not analyse its calls. */
  analysis: CallAnalysis | null;
  /** The call has ended and been priced: its analysis, if the agent has one, was queued in the same step. */
  ended: boolean;
  /** The page is refreshing the call until the analysis is done. */
  polling: boolean;
  /** Admin key: may re-run the analysis. */
  writable: boolean;
  /** Load the call again (and refresh it while the analysis is in progress). */
  onRefresh(): void;
  /** A re-run was queued: show it as pending and refresh until it is done. */
  onQueued(): void;
}) {
  const [problem, setProblem] = useState<string>();
  const [posting, setPosting] = useState(false);

  const inProgress = analysis !== null && (analysis.status === 'pending' || analysis.status === 'running');

  const rerun = async () => {
    if (!window.confirm("Run this call's analysis again with the agent's current analysis settings? The result replaces the one shown here, and its tokens are charged again.")) return;
    setPosting(true);
    setProblem(undefined);
    try {
      await api<AnalysisQueued>(`/v1/calls/${encodeURIComponent(callId)}/analysis`, { key: apiKey, method: 'POST' });
      onQueued();
    } catch (caught) {
      setProblem(messageOf(caught));
      // Running already: show that, and follow it to its end.
      if (caught instanceof ApiError && caught.code === 'analysis_running') onRefresh();
    } finally {
      setPosting(false);
    }
  };

  return (
    <section className="analysis" data-testid="call-analysis">
      <h2>Analysis</h2>
      <ErrorAlert message={problem} />
      {analysis === null ? (
        <p className="empty" data-testid="analysis-state">
          {ended ? "No post-call analysis (off in this agent's config)" : 'Analysed once the call has ended (if this agent analyses calls).'}
        </p>
      ) : (
        <div className="analysis-body">
          {inProgress && (
            <>
              <p className="empty" data-testid="analysis-state">
                Analysing…{' '}
                {!polling && (
                  <>
                    (not done yet){' '}
                    <button type="button" className="small" onClick={onRefresh}>
                      Refresh
                    </button>
                  </>
                )}
              </p>
              {analysis.error && (
                <p className="hint">
                  Attempt {analysis.attempts} failed ({analysis.error}); it is tried again.
                </p>
              )}
            </>
          )}
          {analysis.status === 'failed' && (
            <p className="error" data-testid="analysis-state">
              The analysis failed{analysis.attempts > 1 ? ` after ${analysis.attempts} attempts` : ''}: {analysis.error ?? 'no reason was recorded'}
            </p>
          )}
          {analysis.status === 'completed' && (
            <>
              {analysis.summary ? (
                <p className="analysis-summary" data-testid="analysis-summary">
                  {analysis.summary}
                </p>
              ) : (
                <p className="empty">No summary.</p>
              )}
              {analysis.success !== null && (
                <p className={`verdict ${analysis.success ? 'success' : 'not-successful'}`} data-testid="analysis-verdict">
                  <strong>{analysis.success ? 'Success' : 'Not successful'}</strong>
                  {analysis.successReason && <span>: {analysis.successReason}</span>}
                </p>
              )}
              <StructuredData data={analysis.structuredData} />
              {analysis.structuredDataErrors && analysis.structuredDataErrors.length > 0 && (
                <div className="warning" data-testid="analysis-data-errors">
                  <p>The structured data does not match the agent&apos;s schema (shown as the model gave it):</p>
                  <ul>
                    {analysis.structuredDataErrors.map((message, index) => (
                      <li key={`${index}:${message}`}>{message}</li>
                    ))}
                  </ul>
                </div>
              )}
              <p className="hint" data-testid="analysis-facts">
                {analysis.model ?? 'Model unknown'} · {tokensInWords(analysis)}
                {analysis.completedAt && ` · completed ${new Date(analysis.completedAt).toLocaleString()}`}
              </p>
            </>
          )}
          {writable && ended && (
            <button type="button" onClick={() => void rerun()} disabled={posting || (inProgress && polling)}>
              Re-run analysis
            </button>
          )}
        </div>
      )}
    </section>
  );
}
