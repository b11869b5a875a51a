import type { AgentEngines } from '../agent-engines/agent-engines';

/**
 * The rates agent voices come at: every engine's own, and the TTS voices' (Flite 16 kHz, Piper
 * 22.05 kHz, OpenAI/Kokoro 24 kHz). Each carrier designs its output filters for these at start-up.
 */
export function agentOutputRates(agents: AgentEngines): Set<number> {
  return new Set([...agents.all().map((engine) => engine.audio.outputSampleRate), 16_000, 22_050, 24_000]);
}

/** The rates agents hear callers at: each carrier designs its input filters for these at start-up. */
export function agentInputRates(agents: AgentEngines): Set<number> {
  return new Set(agents.all().map((engine) => engine.audio.inputSampleRate));
}
