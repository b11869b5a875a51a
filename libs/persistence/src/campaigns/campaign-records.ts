import type { Campaign } from '../generated/prisma/client';
import type { MachineDetectionMode } from '../repositories/call-admission';

export const CAMPAIGN_STATUSES = ['running', 'paused', 'completed', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const CAMPAIGN_CONTACT_STATUSES = ['pending', 'dialing', 'done', 'cancelled'] as const;
export type CampaignContactStatus = (typeof CAMPAIGN_CONTACT_STATUSES)[number];

export const CAMPAIGN_OUTCOMES = ['answered', 'voicemail', 'no_answer', 'busy', 'failed'] as const;
export type CampaignOutcome = (typeof CAMPAIGN_OUTCOMES)[number];

/** Days of the week as calling windows name them (Monday first, as ISO 8601 counts). */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Local times 'HH:MM' (to may be '24:00'): calls start at or after `from` and before `to`. */
export interface CallingWindow {
  from: string;
  to: string;
}
export type CallingWindows = Partial<Record<Weekday, CallingWindow[]>>;

export const VOICEMAIL_MODES = ['agent', 'none', 'message'] as const;
export type VoicemailMode = (typeof VOICEMAIL_MODES)[number];

export interface CampaignRetryPolicy {
  onBusy: boolean;
  onNoAnswer: boolean;
  onVoicemail: boolean;
  /** Attempts per contact, the first included. */
  maxAttempts: number;
  delaySeconds: number;
}

export interface CampaignRecord extends NewCampaign {
  id: string;
  status: CampaignStatus;
  statusReason: string | null;
  contactCount: number;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** How many of a campaign's contacts are in each status, and how the finished ones ended. */
export interface CampaignProgress {
  total: number;
  byStatus: Record<CampaignContactStatus, number>;
  /** Contacts that are done, by their final outcome. */
  byOutcome: Record<CampaignOutcome, number>;
  /** Calls placed so far (attempts of every contact). */
  attempts: number;
}

/** One call placed for a contact. */
export interface CampaignContactCall {
  id: string;
  attempt: number;
  status: string;
  answeredBy: string | null;
  endReason: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

export interface CampaignContactRecord {
  id: string;
  position: number;
  to: string;
  timeZone: string;
  variables: Record<string, string>;
  status: CampaignContactStatus;
  /** The latest attempt's outcome; final once the contact is done. */
  outcome: CampaignOutcome | null;
  attempts: number;
  nextAttemptAt: Date;
  /** Oldest attempt first. */
  calls: CampaignContactCall[];
}

export interface CampaignContactPage {
  items: CampaignContactRecord[];
  nextCursor: string | null;
}

export interface CampaignPage {
  items: CampaignRecord[];
  nextCursor: string | null;
}

/** What a campaign is created with (its settings); a stored campaign adds its state. */
export interface NewCampaign {
  organizationId: string;
  name: string;
  agentId: string;
  fromNumber: string;
  timeZone: string;
  callingWindows: CallingWindows;
  startAt: Date;
  endAt: Date | null;
  maxConcurrentCalls: number;
  retry: CampaignRetryPolicy;
  machineDetection: MachineDetectionMode | null;
  voicemail: { mode: VoicemailMode; message: string | null };
}

export interface NewCampaignContact {
  to: string;
  timeZone: string;
  variables: Record<string, string>;
}

export function emptyProgress(): CampaignProgress {
  return {
    total: 0,
    byStatus: { pending: 0, dialing: 0, done: 0, cancelled: 0 },
    byOutcome: { answered: 0, voicemail: 0, no_answer: 0, busy: 0, failed: 0 },
    attempts: 0,
  };
}

export function toCampaignRecord(row: Campaign): CampaignRecord {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    agentId: row.agentId,
    fromNumber: row.fromNumber,
    status: row.status as CampaignStatus,
    statusReason: row.statusReason,
    timeZone: row.timeZone,
    callingWindows: row.callingWindows as CallingWindows,
    startAt: row.startAt,
    endAt: row.endAt,
    maxConcurrentCalls: row.maxConcurrentCalls,
    retry: {
      onBusy: row.retryOnBusy,
      onNoAnswer: row.retryOnNoAnswer,
      onVoicemail: row.retryOnVoicemail,
      maxAttempts: row.maxAttempts,
      delaySeconds: row.retryDelaySeconds,
    },
    machineDetection: row.machineDetection as MachineDetectionMode | null,
    voicemail: { mode: row.voicemailMode as VoicemailMode, message: row.voicemailMessage },
    contactCount: row.contactCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    completedAt: row.completedAt,
  };
}
