import { ErrorAlert } from '../components/error-alert';
import { useEffect, useMemo, useState, type ChangeEvent, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, ApiError, messageOf, WEEKDAYS, type AgentSummary, type Campaign, type FieldProblem, type Page, type PhoneNumber } from '../api';
import {
  browserTimeZone,
  campaignBody,
  csvProblemText,
  formFieldOf,
  formFieldOfCode,
  initialCampaignForm,
  MAX_CSV_FILE_BYTES,
  timeZoneSuggestions,
  WEEKDAY_NAMES,
  type CampaignFormState,
  type DayWindow,
} from '../campaign-form';
import { canWrite, useSession } from '../session';

const CSV_EXAMPLE = 'to,timeZone,firstName\n+14155550100,America/Los_Angeles,Ada\n+442071838750,,Grace';

/**
 * A new outbound campaign: who calls (agent, number), whom (a CSV of contacts, pasted or read from a
 * file), when (time zone, optional start and end, one calling window per weekday), how many at once
 * and what is tried again. The server's 400 problems are shown at the fields they name; a CSV
 * problem under the CSV box with its line. (The selects carry an aria-label as well as their wrapping
 * label: a wrapping label alone names a select with its chosen option's text too.)
 */
export function NewCampaignPage() {
  const { session } = useSession();
  const navigate = useNavigate();
  const [form, setForm] = useState<CampaignFormState>(() => initialCampaignForm(browserTimeZone()));
  const [agents, setAgents] = useState<AgentSummary[]>();
  const [numbers, setNumbers] = useState<PhoneNumber[]>();
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const zones = useMemo(timeZoneSuggestions, []);

  useEffect(() => {
    if (!session) return;
    let live = true;
    Promise.all([api<Page<AgentSummary>>('/v1/agents?limit=100', { key: session.key }), api<Page<PhoneNumber>>('/v1/phone-numbers?limit=100', { key: session.key })]).then(
      ([agentPage, numberPage]) => {
        if (!live) return;
        setAgents(agentPage.data);
        setNumbers(numberPage.data);
      },
      (caught: unknown) => live && setError(messageOf(caught)),
    );
    return () => {
      live = false;
    };
  }, [session]);

  if (!session) return null;
  if (!canWrite(session)) {
    return (
      <section>
        <h1>New campaign</h1>
        <p className="empty">Creating a campaign needs an admin key; this one can read only.</p>
      </section>
    );
  }

  const set = <K extends keyof CampaignFormState>(key: K, value: CampaignFormState[K]) => setForm((current) => ({ ...current, [key]: value }));
  const setDay = (day: (typeof WEEKDAYS)[number], change: Partial<DayWindow>) =>
    setForm((current) => ({ ...current, windows: { ...current.windows, [day]: { ...current.windows[day], ...change } } }));
  const at = (field: string) => problems.filter((problem) => formFieldOf(problem.field) === field);

  const readFile = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    const refuse = (message: string) => setProblems([{ field: 'contactsCsv', rule: 'file', message }]);
    if (file.size > MAX_CSV_FILE_BYTES) return refuse(`${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MiB; a campaign's CSV may be at most ${MAX_CSV_FILE_BYTES / 1024 / 1024} MiB.`);
    const reader = new FileReader();
    reader.onload = () => {
      const text = typeof reader.result === 'string' ? reader.result : '';
      if (text.includes('\u0000')) return refuse(`${file.name} is not a text file (a CSV of contacts is text).`);
      setProblems([]);
      set('contactsCsv', text);
    };
    reader.onerror = () => refuse(`${file.name} could not be read.`);
    reader.readAsText(file);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblems([]);
    setError(undefined);
    const made = campaignBody(form);
    if ('problems' in made) return setProblems(made.problems);
    setBusy(true);
    try {
      const created = await api<Campaign>('/v1/campaigns', { key: session.key, method: 'POST', body: made.body });
      void navigate(`/campaigns/${created.id}`);
    } catch (caught) {
      if (caught instanceof ApiError && caught.details.length > 0) {
        setProblems(caught.details);
        const unplaced = caught.details.filter((problem) => formFieldOf(problem.field) === undefined);
        setError(
          unplaced.length > 0
            ? `Not created: ${unplaced.map((problem) => `${problem.field === '' ? 'request' : problem.field}: ${problem.message}`).join('; ')}`
            : `Not created: ${caught.details.length === 1 ? 'the problem is marked at its field' : `${caught.details.length} problems are marked at their fields`}.`,
        );
      } else if (caught instanceof ApiError && formFieldOfCode(caught.code) !== undefined) {
        setProblems([{ field: formFieldOfCode(caught.code) as string, rule: caught.code, message: caught.message }]);
        setError('Not created: the problem is marked at its field.');
      } else {
        setError(messageOf(caught));
      }
    } finally {
      setBusy(false);
    }
  };

  const agentName = (id: string | null) => agents?.find((agent) => agent.id === id)?.name;
  const csvProblems = at('contactsCsv');
  return (
    <section>
      <p>
        <Link to="/campaigns">← Campaigns</Link>
      </p>
      <form className="card form campaign-form" noValidate onSubmit={(event) => void submit(event)} data-testid="new-campaign-form">
        <h1>New campaign</h1>
        <label>
          Name
          <input name="name" value={form.name} onChange={(event) => set('name', event.target.value)} placeholder="December reminders" />
        </label>
        <Problems problems={at('name')} />
        <div className="field-pair">
          <div>
            <label>
              Agent
              <select name="agentId" aria-label="Agent" value={form.agentId} onChange={(event) => set('agentId', event.target.value)}>
                <option value="">{agents ? 'Choose an agent…' : 'Loading…'}</option>
                {agents?.map((agent) => (
                  <option key={agent.id} value={agent.id}>
                    {agent.name}
                  </option>
                ))}
              </select>
            </label>
            <Problems problems={at('agentId')} />
          </div>
          <div>
            <label>
              From number
              <select name="from" aria-label="From number" value={form.from} onChange={(event) => set('from', event.target.value)}>
                <option value="">{numbers ? 'Choose a number…' : 'Loading…'}</option>
                {numbers?.map((number) => (
                  <option key={number.id} value={number.e164}>
                    {number.e164}
                    {agentName(number.agentId) ? ` (${agentName(number.agentId)})` : ''}
                  </option>
                ))}
              </select>
            </label>
            {numbers && numbers.length === 0 && <p className="hint field-help">The organization has no numbers yet: bind one to an agent on the Agents page.</p>}
            <Problems problems={at('from')} />
          </div>
        </div>

        <fieldset>
          <legend>Contacts</legend>
          <label>
            Contacts (CSV)
            <textarea name="contactsCsv" rows={7} value={form.contactsCsv} onChange={(event) => set('contactsCsv', event.target.value)} spellCheck={false} placeholder={CSV_EXAMPLE} />
          </label>
          <p className="hint field-help">
            A header row <code>to,timeZone,&lt;variables…&gt;</code>, then one contact per row: <code>to</code> in E.164, <code>timeZone</code> optional (empty: the schedule's), every
            other column a variable the agent's prompts read as <code>{'{{call.params.NAME}}'}</code>. For example:
          </p>
          <pre className="csv-example">{CSV_EXAMPLE}</pre>
          <label className="file-pick">
            Or read a CSV file (at most {MAX_CSV_FILE_BYTES / 1024 / 1024} MiB)
            <input type="file" accept=".csv,.txt,text/csv,text/plain" onChange={readFile} />
          </label>
          {csvProblems.length > 0 && (
            <ul className="field-errors" role="alert" data-testid="csv-problems">
              {csvProblems.map((problem) => {
                const shown = csvProblemText(problem, form.contactsCsv);
                return (
                  <li key={`${problem.field}:${problem.message}`}>
                    {shown.text}
                    {shown.line !== undefined && (
                      <>
                        {' '}
                        <code className="csv-line">{shown.line}</code>
                      </>
                    )}
                  </li>
                );
              })}
            </ul>
          )}
        </fieldset>

        <fieldset>
          <legend>Schedule</legend>
          <label>
            Time zone
            <input name="timeZone" list="time-zones" value={form.timeZone} onChange={(event) => set('timeZone', event.target.value)} spellCheck={false} />
            <datalist id="time-zones">
              {zones.map((zone) => (
                <option key={zone} value={zone} />
              ))}
            </datalist>
          </label>
          <p className="hint field-help">Calling windows are read in each contact's own time zone; contacts without one use this zone, as do the start and end below.</p>
          <Problems problems={at('schedule.timeZone')} />
          <div className="field-pair">
            <div>
              <label>
                Start (optional)
                <input name="start" type="datetime-local" value={form.start} onChange={(event) => set('start', event.target.value)} />
              </label>
              <Problems problems={at('schedule.start')} />
            </div>
            <div>
              <label>
                End (optional)
                <input name="end" type="datetime-local" value={form.end} onChange={(event) => set('end', event.target.value)} />
              </label>
              <Problems problems={at('schedule.end')} />
            </div>
          </div>
          <p className="hint field-help">No start: calling begins now. At the end, contacts not yet called are cancelled.</p>
          <div className="windows" role="group" aria-label="Calling windows">
            <span className="windows-title">Calling windows</span>
            {WEEKDAYS.map((day) => (
              <div key={day} className="window-row" data-day={day}>
                <label className="inline">
                  <input type="checkbox" checked={form.windows[day].enabled} onChange={(event) => setDay(day, { enabled: event.target.checked })} />
                  {WEEKDAY_NAMES[day]}
                </label>
                <input type="time" aria-label={`${WEEKDAY_NAMES[day]} from`} value={form.windows[day].from} disabled={!form.windows[day].enabled} onChange={(event) => setDay(day, { from: event.target.value })} />
                <span>to</span>
                <input type="time" aria-label={`${WEEKDAY_NAMES[day]} to`} value={form.windows[day].to} disabled={!form.windows[day].enabled} onChange={(event) => setDay(day, { to: event.target.value })} />
                <Problems problems={at(`schedule.windows.${day}`)} />
              </div>
            ))}
          </div>
          <Problems problems={at('schedule.windows')} />
        </fieldset>

        <fieldset>
          <legend>Calls</legend>
          <label>
            Max concurrent calls
            <input name="maxConcurrentCalls" type="number" min={1} value={form.maxConcurrentCalls} onChange={(event) => set('maxConcurrentCalls', event.target.value)} />
          </label>
          <p className="hint field-help">The organization's own concurrency limit and budget apply too.</p>
          <Problems problems={at('maxConcurrentCalls')} />
          <div className="checks">
            <label className="inline">
              <input type="checkbox" checked={form.retryOnBusy} onChange={(event) => set('retryOnBusy', event.target.checked)} />
              Retry when busy
            </label>
            <label className="inline">
              <input type="checkbox" checked={form.retryOnNoAnswer} onChange={(event) => set('retryOnNoAnswer', event.target.checked)} />
              Retry on no answer
            </label>
            <label className="inline">
              <input type="checkbox" checked={form.retryOnVoicemail} onChange={(event) => set('retryOnVoicemail', event.target.checked)} />
              Retry on voicemail
            </label>
          </div>
          <div className="field-pair">
            <div>
              <label>
                Attempts per contact
                <input name="maxAttempts" type="number" min={1} value={form.maxAttempts} onChange={(event) => set('maxAttempts', event.target.value)} />
              </label>
              <p className="hint field-help">The first call included.</p>
              <Problems problems={at('retry.maxAttempts')} />
            </div>
            <div>
              <label>
                Delay before a retry (seconds)
                <input name="delaySeconds" type="number" min={0} value={form.delaySeconds} onChange={(event) => set('delaySeconds', event.target.value)} />
              </label>
              <p className="hint field-help">3600 is an hour.</p>
              <Problems problems={at('retry.delaySeconds')} />
            </div>
          </div>
          <div className="field-pair">
            <div>
              <label>
                Machine detection
                <select name="machineDetection" aria-label="Machine detection" value={form.machineDetection} onChange={(event) => set('machineDetection', event.target.value as CampaignFormState['machineDetection'])}>
                  <option value="">None</option>
                  <option value="Enable">Enable (verdict at pick-up)</option>
                  <option value="DetectMessageEnd">DetectMessageEnd (after the greeting; needed for a voicemail)</option>
                </select>
              </label>
              <Problems problems={at('machineDetection')} />
            </div>
            <div>
              <label>
                Voicemail
                <select name="voicemailMode" aria-label="Voicemail" value={form.voicemailMode} onChange={(event) => set('voicemailMode', event.target.value as CampaignFormState['voicemailMode'])}>
                  <option value="agent">The agent's default</option>
                  <option value="none">None</option>
                  <option value="message">This message…</option>
                </select>
              </label>
              {form.voicemailMode === 'message' && (
                <label>
                  Voicemail message
                  <textarea name="voicemailMessage" rows={3} value={form.voicemailMessage} onChange={(event) => set('voicemailMessage', event.target.value)} />
                </label>
              )}
              <Problems problems={at('voicemail')} />
            </div>
          </div>
        </fieldset>

        <ErrorAlert message={error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Create campaign
          </button>
          <Link to="/campaigns" className="button link">
            Cancel
          </Link>
        </div>
      </form>
    </section>
  );
}

function Problems({ problems }: { problems: FieldProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul className="field-errors" role="alert">
      {problems.map((problem) => (
        <li key={`${problem.field}:${problem.message}`}>{problem.message}</li>
      ))}
    </ul>
  );
}
