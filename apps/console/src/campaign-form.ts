import { WEEKDAYS, type CallingWindow, type FieldProblem, type Weekday } from './api';

/*
 * The new-campaign form's model, kept apart from React so it can be tested: the form's state, the
 * POST /v1/campaigns body made of it, and where each of the server's 400 problems is shown.
 */

/** The server's bound on contactsCsv (MAX_CAMPAIGN_CSV_BYTES): a bigger file is refused before it is read. */
export const MAX_CSV_FILE_BYTES = 4 * 1024 * 1024;

export const WEEKDAY_NAMES: Record<Weekday, string> = { mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday', sun: 'Sunday' };

export interface DayWindow extends CallingWindow {
  enabled: boolean;
}

export interface CampaignFormState {
  name: string;
  agentId: string;
  from: string;
  contactsCsv: string;
  timeZone: string;
  /** datetime-local values ('YYYY-MM-DDTHH:MM') read in timeZone; empty: now / no end. */
  start: string;
  end: string;
  windows: Record<Weekday, DayWindow>;
  maxConcurrentCalls: string;
  retryOnBusy: boolean;
  retryOnNoAnswer: boolean;
  retryOnVoicemail: boolean;
  maxAttempts: string;
  delaySeconds: string;
  /** '' for none. */
  machineDetection: '' | 'Enable' | 'DetectMessageEnd';
  voicemailMode: 'agent' | 'none' | 'message';
  voicemailMessage: string;
}

/** The browser's own zone (a sensible schedule zone to start from), UTC when it has none. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** IANA zone names for the time zone field's suggestions (UTC first: Intl's list leaves it out). */
export function timeZoneSuggestions(): string[] {
  const supportedValuesOf = (Intl as { supportedValuesOf?: (key: 'timeZone') => string[] }).supportedValuesOf;
  const zones = supportedValuesOf ? supportedValuesOf('timeZone') : [];
  return ['UTC', ...zones.filter((zone) => zone !== 'UTC')];
}

export function initialCampaignForm(timeZone: string): CampaignFormState {
  const weekday = (day: Weekday): DayWindow => ({ enabled: day !== 'sat' && day !== 'sun', from: '09:00', to: '17:00' });
  return {
    name: '',
    agentId: '',
    from: '',
    contactsCsv: '',
    timeZone,
    start: '',
    end: '',
    windows: Object.fromEntries(WEEKDAYS.map((day) => [day, weekday(day)])) as Record<Weekday, DayWindow>,
    maxConcurrentCalls: '1',
    retryOnBusy: true,
    retryOnNoAnswer: true,
    retryOnVoicemail: false,
    maxAttempts: '3',
    delaySeconds: '3600',
    machineDetection: '',
    voicemailMode: 'agent',
    voicemailMessage: '',
  };
}

/** A number field's value as the API wants it: a number when it reads as one, else the text (the server names the rule). */
function numberOrText(value: string): number | string {
  const trimmed = value.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

/**
 * The request body, or the problems found before sending it (a date that cannot be read in the
 * time zone, a choice not made). Everything else is the server's to check.
 */
export function campaignBody(form: CampaignFormState): { body: Record<string, unknown> } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const required = (field: string, value: string, message: string) => {
    if (value.trim() === '') problems.push({ field, rule: 'required', message });
  };
  required('agentId', form.agentId, 'choose the agent that makes the calls');
  required('from', form.from, 'choose the number the calls come from');
  required('contactsCsv', form.contactsCsv, 'paste the contacts (a header row, then one contact per row) or choose a CSV file');

  const instant = (field: 'schedule.start' | 'schedule.end', local: string): string | undefined => {
    if (local === '') return undefined;
    const iso = zonedTimeToIso(local, form.timeZone.trim());
    if (iso === undefined) problems.push({ field, rule: 'custom', message: `cannot be read in the time zone "${form.timeZone}": fix the time zone first` });
    return iso;
  };
  const start = instant('schedule.start', form.start);
  const end = instant('schedule.end', form.end);
  if (problems.length > 0) return { problems };

  const windows = Object.fromEntries(
    WEEKDAYS.filter((day) => form.windows[day].enabled).map((day) => [day, [{ from: form.windows[day].from, to: form.windows[day].to }]]),
  );
  return {
    body: {
      name: form.name,
      agentId: form.agentId,
      from: form.from,
      contactsCsv: form.contactsCsv,
      schedule: { timeZone: form.timeZone.trim(), ...(start !== undefined && { start }), ...(end !== undefined && { end }), windows },
      maxConcurrentCalls: numberOrText(form.maxConcurrentCalls),
      retry: {
        onBusy: form.retryOnBusy,
        onNoAnswer: form.retryOnNoAnswer,
        onVoicemail: form.retryOnVoicemail,
        maxAttempts: numberOrText(form.maxAttempts),
        delaySeconds: numberOrText(form.delaySeconds),
      },
      ...(form.machineDetection !== '' && { machineDetection: form.machineDetection }),
      ...(form.voicemailMode === 'none' && { voicemail: null }),
      ...(form.voicemailMode === 'message' && { voicemail: { message: form.voicemailMessage } }),
    },
  };
}

/** Fields of the form that show problems; the rest go to the form's error alert. */
const SIMPLE_FIELDS = new Set(['name', 'agentId', 'from', 'maxConcurrentCalls', 'machineDetection', 'schedule.timeZone', 'schedule.start', 'schedule.end', 'schedule.windows']);

/**
 * Which field of the form shows a problem the server named by its path: `contactsCsv.4.to` (and
 * `contacts`, the either-or rule) under the CSV box, `schedule.windows.mon.0.to` at Monday's row,
 * `retry.maxAttempts` at its input, `voicemail.message` at the voicemail choice. Undefined: no field
 * shows it (the error alert does).
 */
export function formFieldOf(path: string): string | undefined {
  if (path === 'contacts' || path === 'contactsCsv' || path.startsWith('contactsCsv.') || path.startsWith('contacts.')) return 'contactsCsv';
  const day = /^schedule\.windows\.([a-z]{3})(?:\.|$)/.exec(path)?.[1];
  if (day !== undefined && (WEEKDAYS as readonly string[]).includes(day)) return `schedule.windows.${day}`;
  if (path === 'retry.maxAttempts' || path === 'retry.delaySeconds') return path;
  if (path === 'voicemail' || path.startsWith('voicemail.')) return 'voicemail';
  if (SIMPLE_FIELDS.has(path)) return path;
  return undefined;
}

/** The field an error without a path belongs to, by its code (agent_not_found, from_number_not_owned, voicemail_...). */
export function formFieldOfCode(code: string): string | undefined {
  if (code === 'agent_not_found') return 'agentId';
  if (code === 'from_number_not_owned') return 'from';
  if (code.startsWith('voicemail_')) return 'voicemail';
  return undefined;
}

/**
 * A CSV problem as the CSV box lists it: `contactsCsv.4.to` with "line 4: must be an E.164 number"
 * reads "Line 4, column to: must be an E.164 number", with the line's text (when the textarea still
 * has it) so the row is found at a glance.
 */
export function csvProblemText(problem: FieldProblem, csv: string): { text: string; line?: string } {
  const match = /^contactsCsv\.(\d+)(?:\.(.+))?$/.exec(problem.field);
  if (!match) return { text: problem.message };
  const lineNumber = Number(match[1]);
  const column = match[2]?.replace(/^variables\./, '');
  const message = problem.message.replace(new RegExp(`^line ${lineNumber}: `), '');
  const line = csv.split(/\r?\n/)[lineNumber - 1];
  return {
    text: `Line ${lineNumber}${column === undefined ? '' : `, column ${column}`}: ${message}`,
    ...(line !== undefined && line.trim() !== '' && { line: line.length > 120 ? `${line.slice(0, 119)}…` : line }),
  };
}

/** Offset of `timeZone` from UTC at `instant` (ms; Paris in winter: +3 600 000). Throws for a zone Intl does not know. */
function zoneOffsetMs(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((entry) => entry.type === type)?.value ?? 0);
  const local = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return local - Math.floor(instant / 1000) * 1000;
}

/**
 * A datetime-local value ('2027-01-04T09:00') read as wall-clock time in an IANA zone, as an ISO
 * instant; undefined when the value or the zone cannot be read. A wall time a daylight-saving change
 * skips (02:30 on a spring-forward night) is read as the clock shows it after the change (03:30).
 */
export function zonedTimeToIso(local: string, timeZone: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!match || timeZone === '') return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((value) => Number(value ?? 0)) as [number, number, number, number, number, number];
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  try {
    // The offset at the wall time read as UTC is off by the offset itself near a change: a second look settles it.
    const first = wall - zoneOffsetMs(wall, timeZone);
    return new Date(wall - zoneOffsetMs(first, timeZone)).toISOString();
  } catch {
    return undefined;
  }
}

/** An instant as wall-clock time in a zone, for the campaign page ("Mon, Jan 4, 2027, 09:00"). */
export function formatInZone(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone, weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(new Date(iso));
  } catch {
    return new Date(iso).toLocaleString();
  }
}

/** Calling windows as one line: "Mon 09:00–17:00 · Wed 10:00–12:00, 14:00–18:00". */
export function windowsText(windows: Partial<Record<Weekday, CallingWindow[]>>): string {
  const days = WEEKDAYS.filter((day) => (windows[day] ?? []).length > 0).map(
    (day) => `${WEEKDAY_NAMES[day].slice(0, 3)} ${(windows[day] ?? []).map((window) => `${window.from}–${window.to}`).join(', ')}`,
  );
  return days.length === 0 ? 'none' : days.join(' · ');
}
