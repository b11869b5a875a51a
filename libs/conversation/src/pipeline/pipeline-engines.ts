import type { AsrEngine, EndOfTurnClassifier, LlmEngine, TtsEngine, VadStream } from '@switchboard/inference';
import type { AgentCallContext } from '../agent/agent-session';
import type { AgentConfig } from '@switchboard/agent-config';

/** Which call engines are built for: its organization's secrets pay for them, its meters count them. */
export type EngineCallContext = Pick<AgentCallContext, 'callId' | 'organizationId'>;

/** The engines one pipeline call runs on, chosen from its agent config. */
export interface PipelineEngines {
  /** A fresh VAD stream for this call's caller audio (8 kHz). */
  vad: VadStream;
  asr: AsrEngine;
  llm: LlmEngine;
  tts: TtsEngine;
  endOfTurnClassifier?: EndOfTurnClassifier;
}

/**
 * Builds engines from an agent config. The server implements it (shared runtime, cached remote
 * clients so circuit breakers span calls); benchmarks and tests pass scripted fakes.
 */
export interface PipelineEngineResolver {
  /** The TTS voice's sample rate, known before the engines are built (the call's audio chain needs it). */
  ttsSampleRate(config: AgentConfig): number;
  resolve(config: AgentConfig, call: EngineCallContext): Promise<PipelineEngines>;
}
