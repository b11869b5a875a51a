import type { SpeechToSpeechConnectOptions, SpeechToSpeechTurnDetection } from '../speech-to-speech-engine';
import type { ResolvedOpenAiRealtimeOptions } from './openai-realtime.options';

/**
 * The `session.update` that configures a call's session. Both protocols are built from the same
 * neutral options; only the field layout differs. With mu-law on both sides the API takes and
 * returns telephone audio as is, so the call path never transcodes.
 */
export function buildSessionUpdate(
  engine: Pick<ResolvedOpenAiRealtimeOptions, 'protocol' | 'audioFormat' | 'inputTranscriptionModel' | 'defaultVoice' | 'model'>,
  options: SpeechToSpeechConnectOptions,
): Record<string, unknown> {
  const voice = options.voice ?? engine.defaultVoice;
  const tools = (options.tools ?? []).map((tool) => ({
    type: 'function',
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.parametersSchema,
  }));
  const turnDetection = turnDetectionOf(options.turnDetection);
  const transcription = engine.inputTranscriptionModel === null ? null : { model: engine.inputTranscriptionModel };

  if (engine.protocol === 'beta') {
    const format = engine.audioFormat === 'mulaw8k' ? 'g711_ulaw' : 'pcm16';
    return {
      type: 'session.update',
      session: {
        modalities: ['audio', 'text'],
        instructions: options.instructions,
        ...(voice === undefined ? {} : { voice }),
        input_audio_format: format,
        output_audio_format: format,
        input_audio_transcription: transcription,
        turn_detection: turnDetection,
        tools,
        tool_choice: 'auto',
      },
    };
  }
  const format = engine.audioFormat === 'mulaw8k' ? { type: 'audio/pcmu' } : { type: 'audio/pcm', rate: 24_000 };
  return {
    type: 'session.update',
    session: {
      type: 'realtime',
      model: engine.model,
      output_modalities: ['audio'],
      instructions: options.instructions,
      audio: {
        input: { format, transcription, turn_detection: turnDetection },
        output: { format, ...(voice === undefined ? {} : { voice }) },
      },
      tools,
      tool_choice: 'auto',
    },
  };
}

function turnDetectionOf(detection: SpeechToSpeechTurnDetection): Record<string, unknown> {
  // The server answers on its own when the caller stops, but never cuts its answer short when the
  // caller starts: its VAD would stop the answer for every "uh-huh", and its speech_stopped comes
  // only after its silence window, too late to tell a backchannel from a barge-in. The runtime
  // decides interruptions (its own VAD, minSpeechMs) and sends cancel and truncate itself.
  const common = { create_response: true, interrupt_response: false };
  if (detection.type === 'semantic_vad') {
    return { type: 'semantic_vad', ...common, ...(detection.eagerness === undefined ? {} : { eagerness: detection.eagerness }) };
  }
  return {
    type: 'server_vad',
    ...common,
    ...(detection.threshold === undefined ? {} : { threshold: detection.threshold }),
    ...(detection.prefixPaddingMs === undefined ? {} : { prefix_padding_ms: detection.prefixPaddingMs }),
    ...(detection.silenceDurationMs === undefined ? {} : { silence_duration_ms: detection.silenceDurationMs }),
  };
}
