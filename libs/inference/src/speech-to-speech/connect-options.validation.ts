import { EngineError } from '../contracts/engine-error';
import type { SpeechToSpeechConnectOptions } from './speech-to-speech-engine';

// Function names as the major providers accept them; checking here gives the agent's author a
// clear message at call start instead of a provider error in the middle of a call.
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const EAGERNESS = new Set(['low', 'medium', 'high', 'auto']);

/**
 * Throws a non-retryable EngineError 'bad_request' naming the first invalid field. Shared by every
 * speech-to-speech engine so they reject the same inputs the same way.
 */
export function validateConnectOptions(engine: string, options: SpeechToSpeechConnectOptions): void {
  const fail = (message: string): never => {
    throw new EngineError(engine, 'bad_request', message, false);
  };
  if (typeof options.callId !== 'string' || options.callId.length === 0) fail('callId must be a non-empty string');
  if (typeof options.instructions !== 'string') fail('instructions must be a string');
  if (options.voice !== undefined && (typeof options.voice !== 'string' || options.voice.length === 0)) {
    fail('voice must be a non-empty string when given');
  }
  const names = new Set<string>();
  for (const tool of options.tools ?? []) {
    if (!TOOL_NAME.test(tool.name)) fail(`tool name "${tool.name}" must match ${TOOL_NAME.source}`);
    if (names.has(tool.name)) fail(`tool "${tool.name}" is defined twice`);
    names.add(tool.name);
    if (tool.parametersSchema === null || typeof tool.parametersSchema !== 'object' || Array.isArray(tool.parametersSchema)) {
      fail(`tool "${tool.name}": parametersSchema must be a JSON Schema object`);
    }
  }
  const detection = options.turnDetection;
  if (detection?.type === 'server_vad') {
    const { threshold, prefixPaddingMs, silenceDurationMs } = detection;
    if (threshold !== undefined && !(threshold >= 0 && threshold <= 1)) fail('turnDetection.threshold must be within 0..1');
    if (prefixPaddingMs !== undefined && !(Number.isInteger(prefixPaddingMs) && prefixPaddingMs >= 0)) {
      fail('turnDetection.prefixPaddingMs must be a non-negative integer');
    }
    if (silenceDurationMs !== undefined && !(Number.isInteger(silenceDurationMs) && silenceDurationMs > 0)) {
      fail('turnDetection.silenceDurationMs must be a positive integer');
    }
  } else if (detection?.type === 'semantic_vad') {
    if (detection.eagerness !== undefined && !EAGERNESS.has(detection.eagerness)) {
      fail(`turnDetection.eagerness must be one of ${[...EAGERNESS].join(', ')}`);
    }
  } else {
    fail("turnDetection.type must be 'server_vad' or 'semantic_vad'");
  }
}
