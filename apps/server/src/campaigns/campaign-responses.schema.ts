import {
  CAMPAIGN_CONTACT_STATUSES,
  CAMPAIGN_OUTCOMES,
  CAMPAIGN_STATUSES,
  MACHINE_DETECTION_MODES,
  VOICEMAIL_MODES,
  WEEKDAYS,
  type CampaignProgress,
  type CampaignRecord,
} from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, nullableDateTime, pageOf, uuid } from '../openapi/api-schemas';

/** Documented response shapes of the campaigns API (see openapi/api-schemas.ts). */

const counts = <T extends readonly [string, ...string[]]>(keys: T) =>
  z.strictObject(Object.fromEntries(keys.map((key) => [key, z.number().int()])) as Record<T[number], z.ZodNumber>);

const windowSchema = z.strictObject({ from: z.string(), to: z.string() });

export const campaignSchema = z.strictObject({
  id: uuid,
  name: z.string(),
  agentId: uuid,
  from: z.string(),
  status: z.enum(CAMPAIGN_STATUSES),
  statusReason: z
    .string()
    .nullable()
    .describe('paused: api, budget_exceeded, agent_not_found, from_number_not_owned, twilio_not_configured, voicemail_...; completed: all_contacts_done or schedule_ended; cancelled: api.'),
  schedule: z.strictObject({
    timeZone: z.string(),
    start: isoDateTime,
    end: nullableDateTime,
    windows: z.strictObject(Object.fromEntries(WEEKDAYS.map((day) => [day, z.array(windowSchema).optional()])) as Record<(typeof WEEKDAYS)[number], z.ZodOptional<z.ZodArray<typeof windowSchema>>>),
  }),
  maxConcurrentCalls: z.number().int(),
  retry: z.strictObject({ onBusy: z.boolean(), onNoAnswer: z.boolean(), onVoicemail: z.boolean(), maxAttempts: z.number().int(), delaySeconds: z.number().int() }),
  machineDetection: z.enum(MACHINE_DETECTION_MODES).nullable(),
  voicemail: z.strictObject({ mode: z.enum(VOICEMAIL_MODES).describe("agent: the agent config's default; none; message"), message: z.string().nullable() }),
  progress: z.strictObject({
    total: z.number().int(),
    byStatus: counts(CAMPAIGN_CONTACT_STATUSES),
    byOutcome: counts(CAMPAIGN_OUTCOMES).describe('Contacts that are done, by final outcome.'),
    attempts: z.number().int().describe('Calls placed so far.'),
  }),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  completedAt: nullableDateTime,
});

export const campaignContactSchema = z.strictObject({
  id: uuid,
  position: z.number().int().describe('1-based, in the order given.'),
  to: z.string(),
  timeZone: z.string(),
  variables: z.record(z.string(), z.string()),
  status: z.enum(CAMPAIGN_CONTACT_STATUSES),
  outcome: z.enum(CAMPAIGN_OUTCOMES).nullable().describe("The latest attempt's outcome; final once the contact is done."),
  attempts: z.number().int(),
  nextAttemptAt: isoDateTime.describe('When a pending contact is due (it is then called inside its calling windows).'),
  calls: z.array(
    z.strictObject({
      id: uuid,
      attempt: z.number().int(),
      status: z.string(),
      answeredBy: z.string().nullable(),
      endReason: z.string().nullable(),
      startedAt: isoDateTime,
      endedAt: nullableDateTime,
    }),
  ),
});

export class CampaignDto extends createApiDto(campaignSchema) {}
export class CampaignPageDto extends createApiDto(pageOf(campaignSchema)) {}
export class CampaignContactPageDto extends createApiDto(pageOf(campaignContactSchema)) {}

/** A campaign as the API shows it: its settings grouped as in the request, and its progress. */
export type CampaignView = ReturnType<typeof campaignView>;

export function campaignView(campaign: CampaignRecord, progress: CampaignProgress) {
  return {
    id: campaign.id,
    name: campaign.name,
    agentId: campaign.agentId,
    from: campaign.fromNumber,
    status: campaign.status,
    statusReason: campaign.statusReason,
    schedule: { timeZone: campaign.timeZone, start: campaign.startAt, end: campaign.endAt, windows: campaign.callingWindows },
    maxConcurrentCalls: campaign.maxConcurrentCalls,
    retry: campaign.retry,
    machineDetection: campaign.machineDetection,
    voicemail: campaign.voicemail,
    progress,
    createdAt: campaign.createdAt,
    updatedAt: campaign.updatedAt,
    completedAt: campaign.completedAt,
  };
}
