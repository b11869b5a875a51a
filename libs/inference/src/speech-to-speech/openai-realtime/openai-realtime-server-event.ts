import { EngineError } from '../../contracts/engine-error';
import type { SpeechToSpeechResponseStatus, SpeechToSpeechUsage } from '../speech-to-speech-engine';
import { OPENAI_REALTIME_ENGINE } from './openai-realtime.options';

/**
 * Server event names the session handles, with the beta protocol's names folded into the GA ones
 * (the payloads are the same), so one switch serves both protocols.
 */
const BETA_TO_GA: Readonly<Record<string, string>> = {
  'response.audio.delta': 'response.output_audio.delta',
  'response.audio_transcript.delta': 'response.output_audio_transcript.delta',
  'response.audio_transcript.done': 'response.output_audio_transcript.done',
};

export function normalisedEventType(type: string): string {
  return BETA_TO_GA[type] ?? type;
}

/** Reads a string field, or undefined when absent or of another type (server JSON is untrusted). */
export function stringField(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : undefined;
}

export function numberField(value: unknown, key: string): number | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'number' && Number.isFinite(field) ? field : undefined;
}

export function objectField(value: unknown, key: string): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return field !== null && typeof field === 'object' && !Array.isArray(field) ? (field as Record<string, unknown>) : undefined;
}

/** `response.done`'s `response.usage`, in neutral names; undefined when the server sent none. */
export function usageFrom(response: Record<string, unknown> | undefined): SpeechToSpeechUsage | undefined {
  const usage = objectField(response, 'usage');
  if (usage === undefined) return undefined;
  const input = objectField(usage, 'input_token_details');
  const cached = objectField(input, 'cached_tokens_details');
  const output = objectField(usage, 'output_token_details');
  const count = (from: unknown, key: string): number => numberField(from, key) ?? 0;
  return {
    inputTextTokens: count(input, 'text_tokens'),
    inputAudioTokens: count(input, 'audio_tokens'),
    inputCachedTokens: count(input, 'cached_tokens'),
    inputCachedTextTokens: count(cached, 'text_tokens'),
    inputCachedAudioTokens: count(cached, 'audio_tokens'),
    outputTextTokens: count(output, 'text_tokens'),
    outputAudioTokens: count(output, 'audio_tokens'),
    totalTokens: numberField(usage, 'total_tokens') ?? count(usage, 'input_tokens') + count(usage, 'output_tokens'),
  };
}

export function responseStatusFrom(response: Record<string, unknown> | undefined): SpeechToSpeechResponseStatus {
  switch (stringField(response, 'status')) {
    case 'cancelled':
      return 'cancelled';
    case 'incomplete':
      return 'incomplete';
    case 'failed':
      return 'failed';
    default:
      return 'completed';
  }
}

/**
 * Error codes that are expected races, not faults: cancelling a response the server has just
 * finished, or truncating audio it has already trimmed. Reporting them would page someone for nothing.
 */
const BENIGN_ERROR_CODES = new Set(['response_cancel_not_active']);

/** The EngineError for a server `error` event, or undefined when the error is a benign race. */
export function engineErrorFromServerError(event: Record<string, unknown>): EngineError | undefined {
  const error = objectField(event, 'error');
  const type = stringField(error, 'type') ?? 'unknown_error';
  const code = stringField(error, 'code');
  if (code !== undefined && BENIGN_ERROR_CODES.has(code)) return undefined;
  const message = `Realtime server error (${type}${code === undefined ? '' : `/${code}`}): ${stringField(error, 'message') ?? 'no message'}`;
  if (code === 'rate_limit_exceeded' || type === 'rate_limit_error') {
    return new EngineError(OPENAI_REALTIME_ENGINE, 'rate_limited', message, true);
  }
  if (type === 'server_error') return new EngineError(OPENAI_REALTIME_ENGINE, 'unavailable', message, true);
  if (type === 'invalid_request_error') return new EngineError(OPENAI_REALTIME_ENGINE, 'bad_request', message, false);
  if (type === 'authentication_error') return new EngineError(OPENAI_REALTIME_ENGINE, 'unauthorized', message, false);
  return new EngineError(OPENAI_REALTIME_ENGINE, 'inference_failed', message, false);
}

/** An HTTP status that refused the WebSocket upgrade, as an EngineError. */
export function engineErrorFromUpgradeStatus(status: number): EngineError {
  const message = `Realtime endpoint refused the connection with HTTP ${status}`;
  if (status === 401 || status === 403) return new EngineError(OPENAI_REALTIME_ENGINE, 'unauthorized', message, false, { httpStatus: status });
  if (status === 429) return new EngineError(OPENAI_REALTIME_ENGINE, 'rate_limited', message, true, { httpStatus: status });
  if (status === 408 || status >= 500) return new EngineError(OPENAI_REALTIME_ENGINE, 'unavailable', message, true, { httpStatus: status });
  return new EngineError(OPENAI_REALTIME_ENGINE, 'bad_request', message, false, { httpStatus: status });
}
