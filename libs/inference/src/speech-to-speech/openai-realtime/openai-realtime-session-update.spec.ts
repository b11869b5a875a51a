import type { SpeechToSpeechTurnDetection } from '../speech-to-speech-engine';
import { buildSessionUpdate } from './openai-realtime-session-update';

const engine = { audioFormat: 'mulaw8k', inputTranscriptionModel: null, defaultVoice: undefined, model: 'gpt-realtime' } as const;

function turnDetectionSent(protocol: 'ga' | 'beta', turnDetection: SpeechToSpeechTurnDetection): unknown {
  const update = buildSessionUpdate({ ...engine, protocol }, { callId: 'call-1', instructions: 'Be brief.', turnDetection });
  const session = update['session'] as { turn_detection?: unknown; audio?: { input: { turn_detection: unknown } } };
  // GA nests turn detection under audio.input; beta kept it at the session's top level.
  return protocol === 'ga' ? session.audio?.input.turn_detection : session.turn_detection;
}

describe('buildSessionUpdate: turn detection', () => {
  // The runtime judges barge-in with its own VAD and minSpeechMs: the server answers when the caller
  // stops but must never cancel an answer on its own (it would for every backchannel).
  it.each(['ga', 'beta'] as const)('server VAD answers on its own and never interrupts the answer (%s)', (protocol) => {
    expect(turnDetectionSent(protocol, { type: 'server_vad', threshold: 0.55, prefixPaddingMs: 250, silenceDurationMs: 450 })).toEqual({
      type: 'server_vad',
      create_response: true,
      interrupt_response: false,
      threshold: 0.55,
      prefix_padding_ms: 250,
      silence_duration_ms: 450,
    });
  });

  it.each(['ga', 'beta'] as const)('semantic VAD answers on its own and never interrupts the answer (%s)', (protocol) => {
    expect(turnDetectionSent(protocol, { type: 'semantic_vad', eagerness: 'high' })).toEqual({
      type: 'semantic_vad',
      create_response: true,
      interrupt_response: false,
      eagerness: 'high',
    });
  });

  it('leaves out the server VAD settings the agent did not set (the API defaults apply)', () => {
    expect(turnDetectionSent('ga', { type: 'server_vad' })).toEqual({ type: 'server_vad', create_response: true, interrupt_response: false });
  });
});
