import { voicemailMessage } from '@switchboard/agent-config';
import { CAMPAIGN_CONTACT_STATUSES, isE164, MACHINE_DETECTION_MODES, WEEKDAYS } from '@switchboard/persistence';
import { z } from 'zod';
import { MAX_CALL_VARIABLE_NAME_CHARS, MAX_CALL_VARIABLE_VALUE_CHARS, MAX_CALL_VARIABLES } from '../calls/outbound-call-requests.schema';
import { createApiDto } from '../openapi/api-schemas';
import { isKnownTimeZone, LOCAL_TIME_PATTERN, minutesOf } from './calling-windows';

/** Contacts one campaign may have (each is a row the dialer works through). */
export const MAX_CAMPAIGN_CONTACTS = 10_000;
/** contactsCsv, in UTF-8 bytes. */
export const MAX_CAMPAIGN_CSV_BYTES = 4 * 1024 * 1024;
/** The JSON body of POST /v1/campaigns (the general bound, 256 KiB, is too small for 10 000 contacts). */
export const CAMPAIGN_BODY_LIMIT = '6mb';
export const CAMPAIGNS_ROUTE = '/v1/campaigns';
export const MAX_WINDOWS_PER_DAY = 6;
export const MAX_CAMPAIGN_CONCURRENT_CALLS = 500;
export const MAX_CAMPAIGN_ATTEMPTS = 10;
export const MAX_RETRY_DELAY_SECONDS = 7 * 24 * 3600;

const e164 = z.string().refine(isE164, { message: 'must be an E.164 number, e.g. +14155550100' });

export const timeZoneSchema = z
  .string()
  .max(64)
  .refine(isKnownTimeZone, { message: 'must be an IANA time zone, e.g. Europe/Paris or America/New_York' });

/** The same names and bounds as POST /v1/calls's variables: they reach prompts as {{call.params.NAME}}. */
export const variableName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, 'variable names may use letters, digits, _ . and -')
  .max(MAX_CALL_VARIABLE_NAME_CHARS);
const variables = z
  .record(variableName, z.string().max(MAX_CALL_VARIABLE_VALUE_CHARS))
  .refine((record) => Object.keys(record).length <= MAX_CALL_VARIABLES, { message: `at most ${MAX_CALL_VARIABLES} variables` });

/** One contact, from the `contacts` array or a CSV row (the same rules for both). */
export const campaignContact = z.strictObject({
  to: e164,
  /** IANA zone its calling windows are read in; default: the schedule's timeZone. */
  timeZone: timeZoneSchema.optional().describe("IANA zone the calling windows are read in for this contact; default: schedule.timeZone."),
  variables: variables.default({}).describe('At most 50, as POST /v1/calls: {{call.params.NAME}} in prompts.'),
});
export type CampaignContactInput = z.infer<typeof campaignContact>;

const localTime = z.string().regex(LOCAL_TIME_PATTERN, "must be a local time 'HH:MM' from 00:00 to 24:00");
const callingWindow = z
  .strictObject({ from: localTime, to: localTime })
  .refine((window) => !LOCAL_TIME_PATTERN.test(window.from) || !LOCAL_TIME_PATTERN.test(window.to) || minutesOf(window.from) < minutesOf(window.to), {
    message: 'must be after from (a window cannot cross midnight: end it at 24:00 and start the next day at 00:00)',
    path: ['to'],
  });
const dayWindows = z.array(callingWindow).max(MAX_WINDOWS_PER_DAY);
const windows = z
  .strictObject(Object.fromEntries(WEEKDAYS.map((day) => [day, dayWindows.optional()])) as Record<(typeof WEEKDAYS)[number], z.ZodOptional<typeof dayWindows>>)
  .refine((week) => Object.values(week).some((list) => list !== undefined && list.length > 0), { message: 'at least one calling window is needed' });

const schedule = z.strictObject({
  /** The campaign's zone: contacts that name none are called in its local time. */
  timeZone: timeZoneSchema.describe('IANA zone of contacts that name none.'),
  /** No call before this instant (default: now). */
  start: z.iso.datetime({ offset: true }).optional().describe('No call before this instant (default: now).'),
  /** No call from this instant on: contacts not called by then are cancelled (default: none). */
  end: z.iso.datetime({ offset: true }).optional().describe('No call from this instant on; contacts not called by then are cancelled and the campaign completes (default: no end).'),
  /** Local times per weekday ('mon'..'sun') when contacts may be called, in each contact's own zone. */
  windows: windows.describe("Per weekday (mon..sun), windows {from, to} of local time 'HH:MM' (to may be 24:00) in each contact's own zone; a day left out has no calls."),
});

const retry = z.strictObject({
  onBusy: z.boolean().default(true),
  onNoAnswer: z.boolean().default(true),
  onVoicemail: z.boolean().default(false),
  /** Attempts per contact, the first included. */
  maxAttempts: z.number().int().min(1).max(MAX_CAMPAIGN_ATTEMPTS).default(3),
  /** Seconds between an attempt's end and the next attempt. */
  delaySeconds: z.number().int().min(0).max(MAX_RETRY_DELAY_SECONDS).default(3600),
});

/** POST /v1/campaigns. Contacts come as `contacts` or as `contactsCsv`, never both. */
export const createCampaignBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    agentId: z.guid(),
    /** One of the organization's numbers: the caller ID of every call. */
    from: e164,
    contacts: z.array(campaignContact).min(1).max(MAX_CAMPAIGN_CONTACTS).optional(),
    contactsCsv: z
      .string()
      .min(1)
      .refine((text) => Buffer.byteLength(text, 'utf8') <= MAX_CAMPAIGN_CSV_BYTES, { message: `at most ${MAX_CAMPAIGN_CSV_BYTES} bytes` })
      .optional()
      .describe(`CSV text: a header row "to,timeZone,<variable names...>" (timeZone optional), then one contact per row; at most ${MAX_CAMPAIGN_CONTACTS} rows.`),
    schedule,
    /** Calls of this campaign in progress at once (the organization's own limit applies as well). */
    maxConcurrentCalls: z.number().int().min(1).max(MAX_CAMPAIGN_CONCURRENT_CALLS).default(1).describe("Calls of this campaign in progress at once; the organization's concurrency limit applies too."),
    retry: retry.prefault({}).describe('Which outcomes are tried again, how often (attempts in all, the first included) and after how many seconds.'),
    /** Twilio answering-machine detection on every call (asynchronous); its verdict gives the voicemail outcome. */
    machineDetection: z.enum(MACHINE_DETECTION_MODES).optional(),
    voicemail: z
      .strictObject({ message: voicemailMessage })
      .nullable()
      .optional()
      .describe("Voicemail drop on every call, as POST /v1/calls's voicemail: needs machineDetection DetectMessageEnd; null: none even if the agent has a default."),
  })
  .superRefine((body, context) => {
    if ((body.contacts === undefined) === (body.contactsCsv === undefined)) {
      context.addIssue({ code: 'custom', path: ['contacts'], message: 'give the contacts either as contacts or as contactsCsv (one of the two)' });
    }
    if (body.schedule.start !== undefined && body.schedule.end !== undefined && Date.parse(body.schedule.end) <= Date.parse(body.schedule.start)) {
      context.addIssue({ code: 'custom', path: ['schedule', 'end'], message: 'must be after schedule.start' });
    }
  });
export type CreateCampaignBody = z.infer<typeof createCampaignBody>;

export const listCampaignsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(512).optional(),
});

export const listCampaignContactsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
  status: z.enum(CAMPAIGN_CONTACT_STATUSES).optional(),
});

export const campaignIdParam = z.string().min(1).max(64);

export class CreateCampaignBodyDto extends createApiDto(createCampaignBody) {}
export class ListCampaignsQueryDto extends createApiDto(listCampaignsQuery) {}
export class ListCampaignContactsQueryDto extends createApiDto(listCampaignContactsQuery) {}
