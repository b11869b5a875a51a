import { callCostSchema } from '../billing/costs-api/cost-responses.schema';
import { CALL_DIRECTIONS, TRANSCRIPT_ROLES, TRANSCRIPT_SOURCES, TWILIO_CALL_STATUSES } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, nullableDateTime, pageOf, uuid } from '../openapi/api-schemas';
import { callAnalysisSchema } from '../analysis/call-analysis-view';

/** Documented response shapes of the calls API (see openapi/api-schemas.ts). */

const nullableMs = z.number().nullable();

export const callSchema = z.strictObject({
  id: uuid,
  organizationId: uuid.nullable().describe('Null only for calls to numbers no organization owns (never visible through the API).'),
  twilioCallSid: z.string().nullable().describe('Null while an outbound call waits for Twilio to accept it, and for web calls.'),
  twilioStreamSid: z.string().nullable(),
  twilioAccountSid: z.string().nullable().describe('Null for web calls.'),
  direction: z.enum(CALL_DIRECTIONS).describe('web: a call from the browser (POST /v1/agents/{id}/web-calls).'),
  fromNumber: z.string(),
  toNumber: z.string(),
  agentId: uuid.nullable(),
  agentConfigVersion: z.number().int().nullable().describe('The agent config version the call ran with.'),
  status: z.enum(TWILIO_CALL_STATUSES).describe('Latest Twilio CallStatus.'),
  lastStatusSequence: z.number().int().nullable(),
  statusTimeline: z.array(z.strictObject({ status: z.string(), at: isoDateTime, sequenceNumber: z.number().int().nullable() })),
  createdAt: isoDateTime,
  startedAt: isoDateTime.describe('Origin of every *Ms offset recorded for the call.'),
  answeredAt: nullableDateTime,
  endedAt: nullableDateTime,
  durationSeconds: z.number().int().nullable().describe('Twilio CallDuration.'),
  billedMinutes: z.number().int().nullable().describe('Twilio Duration (billed minutes).'),
  streamStartedAt: nullableDateTime,
  streamEndedAt: nullableDateTime,
  endReason: z
    .string()
    .nullable()
    .describe(
      'stream_stopped (the caller or Twilio ended the stream), connection_lost, agent_hangup, api_hangup, transferred, idle_timeout, max_duration, agent_error, agent_not_ready, concurrency_limit, budget_exceeded, unknown_number, twilio_error, ...',
    ),
  variables: z.record(z.string(), z.string()).describe('Per-call variables (POST /v1/calls), {{call.params.NAME}} in prompts.'),
  machineDetection: z.enum(['Enable', 'DetectMessageEnd']).nullable(),
  answeredBy: z.string().nullable().describe('Twilio AnsweredBy: human, machine_start, machine_end_beep, fax, unknown, ...'),
  testRunId: uuid.nullable().describe('The scenario test run that placed this web call (GET /v1/agents/{id}/tests/runs/{runId}); null otherwise.'),
  updatedAt: isoDateTime,
});

const callEventSchema = z.strictObject({
  id: z.string().describe('bigint as a string'),
  callId: uuid,
  at: isoDateTime,
  offsetMs: z.number().int().nullable(),
  type: z.string(),
  payload: z.unknown(),
});

const transcriptTurnSchema = z.strictObject({
  id: uuid,
  index: z.number().int(),
  role: z.enum(TRANSCRIPT_ROLES),
  source: z.enum(TRANSCRIPT_SOURCES),
  text: z.string(),
  heardText: z.string().nullable().describe('Interrupted assistant turns: what the caller actually heard.'),
  interrupted: z.boolean(),
  startMs: z.number().int(),
  endMs: z.number().int(),
  createdAt: isoDateTime,
});

const toolInvocationSchema = z.strictObject({
  id: uuid,
  toolCallId: z.string(),
  name: z.string(),
  arguments: z.unknown(),
  result: z.unknown().describe('Null when the tool failed (see error).'),
  error: z.string().nullable(),
  startedAtMs: z.number().int(),
  latencyMs: z.number(),
  createdAt: isoDateTime,
});

const turnLatencySchema = z.strictObject({
  turnIndex: z.number().int(),
  endOfSpeechMs: nullableMs.describe('Arrival of the frame where the caller\'s final silence began (call clock).'),
  endOfTurnFrameMs: nullableMs.describe('Arrival of the frame that completed the end-of-turn silence; endOfTurnMs minus this is queueing in the server.'),
  endOfTurnMs: nullableMs.describe('When the server acted on the end of the turn.'),
  asrFinalMs: nullableMs,
  llmFirstTokenMs: nullableMs,
  ttsFirstByteMs: nullableMs,
  firstFrameSentMs: nullableMs,
  firstMarkEchoedMs: nullableMs,
  interruptedAtMs: nullableMs.describe('When the reply was cut (barge-in, superseded, call ended); null when it played out.'),
  voiceToVoiceMs: nullableMs.describe('Caller stopped speaking -> first agent audio frame sent.'),
  createdAt: isoDateTime,
});

export const callDetailSchema = callSchema.extend({
  events: z.array(callEventSchema),
  transcript: z.array(transcriptTurnSchema),
  toolInvocations: z.array(toolInvocationSchema),
  latency: z.array(turnLatencySchema).describe('One waterfall per reply; offsets in ms since startedAt.'),
  cost: callCostSchema.describe('The cost ledger (also GET /v1/calls/{id}/cost).'),
  analysis: callAnalysisSchema.nullable().describe("The post-call analysis (agent config `analysis`); null when the call's agent has none."),
});

export class CallDto extends createApiDto(callSchema) {}
export class CallDetailDto extends createApiDto(callDetailSchema) {}
export class CallPageDto extends createApiDto(pageOf(callSchema)) {}
