import type { SpeechToSpeechEngine, SpeechToSpeechSession } from '@switchboard/inference';
import type { AgentConfig } from '@switchboard/agent-config';
import type { ToolRunner } from '../tools/tool-contracts';

/** The model's session, or why there is none (`failure`: the call's `error` event code). */
export type ModelConnection = { session: SpeechToSpeechSession } | { failure: 'realtime_audio_format' | 'realtime_connect_failed'; error: unknown };

/** Opens one call's speech-to-speech session with the agent's instructions, voice, tools and turn settings. */
export async function connectModel(
  enginePromise: Promise<SpeechToSpeechEngine>,
  call: { callId: string; instructions: string; config: AgentConfig; tools: ToolRunner },
): Promise<ModelConnection> {
  try {
    const engine = await enginePromise;
    // The call path passes telephone audio through as mu-law; an engine set up for PCM would
    // turn every frame into noise, so it is refused up front with a clear reason.
    if (engine.inputFormat !== 'mulaw8k' || engine.outputFormat !== 'mulaw8k') {
      return { failure: 'realtime_audio_format', error: new Error(`the realtime engine must speak mulaw8k both ways (got ${engine.inputFormat} in, ${engine.outputFormat} out)`) };
    }
    const { config } = call;
    const session = await engine.connect({
      callId: call.callId,
      instructions: call.instructions,
      voice: config.realtime.voice,
      tools: call.tools.definitions.map((tool) => ({ name: tool.name, description: tool.description, parametersSchema: tool.parameters })),
      turnDetection: { type: config.realtime.turnDetection, threshold: config.turn.threshold, silenceDurationMs: config.turn.minSilenceMs, prefixPaddingMs: config.turn.prefixPaddingMs },
    });
    return { session };
  } catch (error) {
    return { failure: 'realtime_connect_failed', error };
  }
}
