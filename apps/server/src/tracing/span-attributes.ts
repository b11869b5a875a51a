import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';

/**
 * Every span name and attribute key the server writes, in one place, so what a trace may carry can
 * be read (and reviewed) at a glance. Values are identifiers, counts, timings and codes: never a
 * phone number, a transcript, a prompt, tool arguments or results, or an endpoint URL (tenant data
 * stays out of traces). Stable OpenTelemetry names where one exists (error.type, http.*,
 * gen_ai.usage.*), `switchboard.*` otherwise.
 */
export const SPAN = {
  call: 'call',
  turn: 'turn',
  stt: 'stt',
  llm: 'llm',
  tts: 'tts',
  tool: 'tool',
  realtimeConnect: 'realtime.connect',
  realtimeResponse: 'realtime.response',
} as const;

export const ATTR = {
  callId: 'switchboard.call.id',
  organizationId: 'switchboard.organization.id',
  agentId: 'switchboard.agent.id',
  agentConfigVersion: 'switchboard.agent.config_version',
  agentEngine: 'switchboard.agent.engine',
  direction: 'switchboard.call.direction',
  endReason: 'switchboard.call.end_reason',
  resumed: 'switchboard.call.resumed',
  callTurns: 'switchboard.call.turns',

  turnIndex: 'switchboard.turn.index',
  turnInput: 'switchboard.turn.input',
  turnOutcome: 'switchboard.turn.outcome',
  interrupted: 'switchboard.turn.interrupted',
  bargeIn: 'switchboard.turn.barge_in',
  cutReason: 'switchboard.turn.cut_reason',
  replyLatencyMs: 'switchboard.turn.reply_latency_ms',

  step: 'switchboard.engine.step',
  provider: 'switchboard.engine.provider',
  engineName: 'switchboard.engine.name',
  model: 'gen_ai.request.model',
  attempts: 'switchboard.engine.attempts',
  firstResultMs: 'switchboard.engine.first_result_ms',
  cancelled: 'switchboard.engine.cancelled',
  retryable: 'switchboard.engine.retryable',
  httpStatus: ATTR_HTTP_RESPONSE_STATUS_CODE,
  errorType: ATTR_ERROR_TYPE,

  llmRound: 'switchboard.llm.round',
  llmFinishReason: 'gen_ai.response.finish_reasons',
  llmToolCalls: 'switchboard.llm.tool_calls',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  sttAudioSeconds: 'switchboard.stt.audio_seconds',
  ttsCharacters: 'switchboard.tts.characters',
  ttsAudioBytes: 'switchboard.tts.audio_bytes',
  toolName: 'switchboard.tool.name',
  realtimeStatus: 'switchboard.realtime.status',
} as const;
