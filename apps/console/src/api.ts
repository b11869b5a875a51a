/**
 * The console's one way to the server: the same `/v1` API every client uses, with the signed-in
 * key as a bearer token. Errors keep the API's machine-readable body (code, message, field details).
 */

export interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

/** A problem at a path inside an agent's config (a refused save, or why the agent is not ready). */
export interface ConfigProblem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
    /** The body's `problems` as the server gave them (paths inside the agent's config). */
    readonly problems: ConfigProblem[] = [],
  ) {
    super(message);
  }
}

export async function api<T>(path: string, options: { key?: string; method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const error = (body ?? {}) as { code?: string; error?: string; message?: string | string[]; details?: FieldProblem[]; problems?: ConfigProblem[] };
    const message = Array.isArray(error.message) ? error.message.join('; ') : error.message;
    // The machine-readable code is `code`; a body that puts it in `error` (snake_case, unlike the HTTP phrase "Conflict") is read the same.
    const code = error.code ?? (error.error !== undefined && /^[a-z][a-z0-9_]*$/.test(error.error) ? error.error : `http_${response.status}`);
    // Request-shape errors list `details` by body field; an agent config's own rules list `problems` by path inside the config.
    const configProblems = (error.problems ?? []).map((problem) => ({ field: problem.path === '' ? 'config' : `config.${problem.path}`, rule: 'config', message: problem.message }));
    throw new ApiError(response.status, code, message ?? `The server answered ${response.status}.`, [...(error.details ?? []), ...configProblems], error.problems ?? []);
  }
  return body as T;
}

export interface CurrentKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  organizationId: string;
}

/** Whether an agent can take calls as configured, and if not, what to fix (paths inside its config). */
export interface AgentReadiness {
  ready: boolean;
  problems: ConfigProblem[];
}

export interface AgentSummary {
  id: string;
  name: string;
  engine: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  /** Absent from servers that do not report readiness yet: such an agent is taken as ready. */
  readiness?: AgentReadiness;
}

/** An agent with the config of its current version (every default filled in). */
export interface AgentDetail extends AgentSummary {
  config: Record<string, unknown>;
}

export interface AgentConfigVersion {
  agentId: string;
  version: number;
  config: Record<string, unknown>;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface CallSummary {
  id: string;
  direction: string;
  status: string;
  fromNumber: string;
  toNumber: string;
  agentId: string | null;
  /** The agent config version the call ran with. */
  agentConfigVersion: number | null;
  startedAt: string;
  answeredAt: string | null;
  endedAt: string | null;
  endReason: string | null;
  /** Twilio's CallDuration (phone calls, once Twilio reported it). */
  durationSeconds: number | null;
  updatedAt: string;
}

export interface TranscriptTurn {
  index: number;
  role: string;
  source: string;
  text: string;
  heardText: string | null;
  interrupted: boolean;
  startMs: number;
  endMs: number;
}

export interface ToolInvocation {
  id: string;
  name: string;
  arguments: unknown;
  result: unknown;
  error: string | null;
  startedAtMs: number;
  latencyMs: number;
}

export interface TurnLatency {
  turnIndex: number;
  endOfSpeechMs: number | null;
  endOfTurnFrameMs: number | null;
  endOfTurnMs: number | null;
  asrFinalMs: number | null;
  llmFirstTokenMs: number | null;
  ttsFirstByteMs: number | null;
  firstFrameSentMs: number | null;
  firstMarkEchoedMs: number | null;
  interruptedAtMs: number | null;
  voiceToVoiceMs: number | null;
}

export interface CallEvent {
  id: string;
  at: string;
  offsetMs: number | null;
  type: string;
  payload: unknown;
}

export interface CostLine {
  id: string;
  component: string;
  kind: 'charge' | 'correction';
  reason: string | null;
  quantity: number;
  unit: string;
  /** The price per `unitSize` units of `unit`, in micro-units. */
  unitPriceMicros: number;
  unitSize: number;
  /** The price's unit in words: minute, 1M tokens, second. */
  pricePer: string;
  amountMicros: number;
  amount: string;
}

export interface CallCost {
  status: 'priced' | 'pending';
  currency: string | null;
  totalMicros: number | null;
  total: string | null;
  lines: CostLine[];
}

/** A call's post-call analysis (agent config `analysis`), as GET /v1/calls/:id gives it. */
export interface CallAnalysis {
  /** 'pending'/'running' until the analysis LLM has answered; 'failed' after its last retry (see error). */
  status: 'pending' | 'running' | 'completed' | 'failed';
  summary: string | null;
  /** The data extracted into the agent's analysis.structuredData schema (as the model gave it when it did not validate). */
  structuredData: unknown;
  /** Why structuredData does not match the schema; null when it matches. */
  structuredDataErrors: string[] | null;
  /** Whether the call met analysis.successCriteria (null without criteria). */
  success: boolean | null;
  successReason: string | null;
  model: string | null;
  attempts: number;
  /** Every run of this analysis, re-runs included. */
  inputTokens: number;
  outputTokens: number;
  /** The last failed attempt's reason. */
  error: string | null;
  createdAt: string;
  completedAt: string | null;
}

/** POST /v1/calls/:id/analysis: the re-run is queued. */
export interface AnalysisQueued {
  callId: string;
  status: 'pending';
}

export interface CallDetail extends CallSummary {
  transcript: TranscriptTurn[];
  toolInvocations: ToolInvocation[];
  latency: TurnLatency[];
  events: CallEvent[];
  cost: CallCost;
  /** Null when the call's agent does not analyse its calls. */
  analysis: CallAnalysis | null;
}

/** A call's recording (GET /v1/calls/:id/recording/link gives it with a link). */
export interface CallRecording {
  callId: string;
  status: 'recording' | 'available' | 'failed' | 'deleted';
  /** 'dual': a stereo WAV, the caller on the left and the agent (as the caller heard it) on the right; 'mono': both mixed. */
  channels: 'dual' | 'mono';
  sampleRate: number;
  contentType: string;
  durationMs: number | null;
  bytes: number | null;
  /** Where the file's first sample sits on the call's timeline (ms since startedAt): a turn at startMs plays at startMs - startedOffsetMs in the file. */
  startedOffsetMs: number;
  createdAt: string;
  completedAt: string | null;
  deletedAt: string | null;
}

/** A short-lived URL that serves the recording's WAV without an API key (absolute, on PUBLIC_BASE_URL). */
export interface RecordingLink {
  url: string;
  expiresAt: string;
  recording: CallRecording;
}

/** What to show of anything a request threw. */
export function messageOf(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}

/** A phone number of the organization (GET /v1/phone-numbers): the caller ID of outbound calls and campaigns. */
export interface PhoneNumber {
  id: string;
  e164: string;
  agentId: string | null;
}

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const CAMPAIGN_CONTACT_STATUSES = ['pending', 'dialing', 'done', 'cancelled'] as const;
export type CampaignContactStatus = (typeof CAMPAIGN_CONTACT_STATUSES)[number];
export const CAMPAIGN_OUTCOMES = ['answered', 'voicemail', 'no_answer', 'busy', 'failed'] as const;
export type CampaignOutcome = (typeof CAMPAIGN_OUTCOMES)[number];
export const MACHINE_DETECTION_MODES = ['Enable', 'DetectMessageEnd'] as const;

/** Local times 'HH:MM' in each contact's zone (to may be 24:00). */
export interface CallingWindow {
  from: string;
  to: string;
}

/** An outbound campaign with its progress (GET /v1/campaigns/:id). */
export interface Campaign {
  id: string;
  name: string;
  agentId: string;
  from: string;
  status: 'running' | 'paused' | 'completed' | 'cancelled';
  /** paused: api, budget_exceeded, agent_not_found, …; completed: all_contacts_done or schedule_ended; cancelled: api. */
  statusReason: string | null;
  schedule: { timeZone: string; start: string; end: string | null; windows: Partial<Record<Weekday, CallingWindow[]>> };
  maxConcurrentCalls: number;
  retry: { onBusy: boolean; onNoAnswer: boolean; onVoicemail: boolean; maxAttempts: number; delaySeconds: number };
  machineDetection: (typeof MACHINE_DETECTION_MODES)[number] | null;
  voicemail: { mode: 'agent' | 'none' | 'message'; message: string | null };
  progress: {
    total: number;
    byStatus: Record<CampaignContactStatus, number>;
    /** Contacts that are done, by final outcome. */
    byOutcome: Record<CampaignOutcome, number>;
    /** Calls placed so far. */
    attempts: number;
  };
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

/** One contact of a campaign (GET /v1/campaigns/:id/contacts). */
export interface CampaignContact {
  id: string;
  /** 1-based, in the order given. */
  position: number;
  to: string;
  timeZone: string;
  variables: Record<string, string>;
  status: CampaignContactStatus;
  /** The latest attempt's outcome; final once the contact is done. */
  outcome: CampaignOutcome | null;
  attempts: number;
  nextAttemptAt: string;
  calls: Array<{ id: string; attempt: number; status: string; answeredBy: string | null; endReason: string | null; startedAt: string; endedAt: string | null }>;
}
