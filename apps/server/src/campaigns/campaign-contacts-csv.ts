import { CsvError, parse } from 'csv-parse/sync';
import { MAX_CALL_VARIABLES } from '../calls/outbound-call-requests.schema';
import { campaignContact, MAX_CAMPAIGN_CONTACTS, variableName, type CampaignContactInput } from './campaign-requests.schema';

/** One broken rule, as the API's 400 lists them (field, rule, message). */
export interface ContactIssue {
  field: string;
  rule: string;
  message: string;
}

/** A contact with the field path that names it in errors: `contacts.3` or `contactsCsv.4` (the CSV line). */
export interface LabelledContact {
  contact: CampaignContactInput;
  field: string;
}

/** A CSV of ten thousand bad rows is not answered with ten thousand details. */
export const MAX_REPORTED_ISSUES = 50;
/** One CSV record at most (a row of 50 variables of 1000 characters, quoted, with room to spare). */
const MAX_CSV_RECORD_BYTES = 64 * 1024;

/**
 * Reads `contactsCsv`: a header row `to,timeZone,<variable names...>` (timeZone optional, in any
 * column), then one contact per row, each checked with the same rules as an entry of `contacts`.
 * Every problem names its line (the header is line 1): `contactsCsv.4.to`. An empty timeZone cell
 * means the schedule's zone; empty variable cells are empty strings.
 */
export function parseContactsCsv(text: string): { contacts: LabelledContact[]; issues: ContactIssue[] } {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text, {
      bom: true,
      info: true,
      skip_empty_lines: true,
      max_record_size: MAX_CSV_RECORD_BYTES,
      // One record past the limit is enough to say there are too many.
      to: MAX_CAMPAIGN_CONTACTS + 2,
    }) as unknown as Array<{ record: string[]; info: { lines: number } }>;
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const line = (error as CsvError & { lines?: number }).lines;
    return { contacts: [], issues: [{ field: line === undefined ? 'contactsCsv' : `contactsCsv.${line}`, rule: 'csv', message: `line ${line ?? '?'}: ${error.message}` }] };
  }
  const [header, ...rows] = records;
  if (header === undefined || rows.length === 0) {
    return { contacts: [], issues: [{ field: 'contactsCsv', rule: 'too_small', message: 'needs a header row and at least one contact row' }] };
  }
  const columns = readHeader(header.record);
  if ('issues' in columns) return { contacts: [], issues: columns.issues };
  if (rows.length > MAX_CAMPAIGN_CONTACTS) {
    return { contacts: [], issues: [{ field: 'contactsCsv', rule: 'too_big', message: `at most ${MAX_CAMPAIGN_CONTACTS} contact rows` }] };
  }

  const contacts: LabelledContact[] = [];
  const issues: ContactIssue[] = [];
  for (const { record, info } of rows) {
    const field = `contactsCsv.${info.lines}`;
    const variables = Object.fromEntries(columns.variables.map(({ name, index }) => [name, record[index] ?? '']));
    const zone = columns.timeZone === undefined ? '' : (record[columns.timeZone] ?? '').trim();
    const parsed = campaignContact.safeParse({ to: (record[columns.to] ?? '').trim(), ...(zone !== '' && { timeZone: zone }), variables });
    if (parsed.success) contacts.push({ contact: parsed.data, field });
    else for (const issue of parsed.error.issues) issues.push({ field: [field, ...issue.path].join('.'), rule: issue.code, message: `line ${info.lines}: ${issue.message}` });
  }
  return { contacts, issues };
}

interface CsvColumns {
  to: number;
  timeZone: number | undefined;
  variables: Array<{ name: string; index: number }>;
}

function readHeader(names: string[]): CsvColumns | { issues: ContactIssue[] } {
  const issues: ContactIssue[] = [];
  const trimmed = names.map((name) => name.trim());
  const seen = new Set<string>();
  let to: number | undefined;
  let timeZone: number | undefined;
  const variables: Array<{ name: string; index: number }> = [];
  trimmed.forEach((name, index) => {
    if (seen.has(name)) issues.push({ field: 'contactsCsv.1', rule: 'custom', message: `line 1: column "${name}" appears twice` });
    seen.add(name);
    if (name === 'to') to = index;
    else if (name === 'timeZone') timeZone = index;
    else if (variableName.safeParse(name).success) variables.push({ name, index });
    else issues.push({ field: 'contactsCsv.1', rule: 'custom', message: `line 1: column "${name}" is not a variable name (letters, digits, _ . and -, at most 64)` });
  });
  if (to === undefined) issues.push({ field: 'contactsCsv.1', rule: 'custom', message: 'line 1: the header row needs a "to" column (to,timeZone,<variable names...>)' });
  if (variables.length > MAX_CALL_VARIABLES) issues.push({ field: 'contactsCsv.1', rule: 'too_big', message: `line 1: at most ${MAX_CALL_VARIABLES} variable columns` });
  return issues.length > 0 || to === undefined ? { issues } : { to, timeZone, variables };
}
