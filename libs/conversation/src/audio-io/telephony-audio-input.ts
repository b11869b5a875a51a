import { decodeMulaw, StreamingResampler } from '@switchboard/audio';
import type { AgentAudioEncoding, AgentSession } from '../agent/agent-session';

/** A phone call's media stream carries G.711 mu-law at 8 kHz. */
export const TELEPHONY_SAMPLE_RATE = 8_000;

/**
 * Inbound half of the call's audio chain. For a PCM agent: mu-law bytes from the wire -> PCM16 at
 * 8 kHz -> PCM16 at the agent's input rate; one instance per call, so the resampler keeps filter
 * state across frames and 20 ms frame boundaries add nothing audible. For a mu-law agent: the bytes
 * as they came, nothing decoded or copied.
 */
export class TelephonyAudioInput {
  private readonly resampler: StreamingResampler | undefined;
  private decoded = new Int16Array(160);

  constructor(
    readonly agentSampleRate: number,
    readonly encoding: AgentAudioEncoding = 'pcm16',
  ) {
    if (encoding === 'mulaw' && agentSampleRate !== TELEPHONY_SAMPLE_RATE) {
      throw new RangeError(`a mu-law agent takes ${TELEPHONY_SAMPLE_RATE} Hz audio, not ${agentSampleRate} Hz`);
    }
    this.resampler =
      encoding === 'mulaw' || agentSampleRate === TELEPHONY_SAMPLE_RATE
        ? undefined
        : new StreamingResampler({ inputRate: TELEPHONY_SAMPLE_RATE, outputRate: agentSampleRate });
  }

  /** Throws when the agent lacks the method its declared input encoding needs (a programming error, caught at call start). */
  checkAgent(agent: AgentSession): void {
    const method = this.encoding === 'mulaw' ? 'pushMulaw' : 'pushAudio';
    if (typeof agent[method] !== 'function') throw new TypeError(`the agent declares ${this.encoding} input but has no ${method}()`);
  }

  /**
   * Hands one caller frame to the agent in the form it declared. `mulaw` may be a view into a
   * buffer the caller reuses (the media session's payload buffer); a mu-law agent gets that very
   * view, so it copies what it keeps.
   */
  deliver(mulaw: Uint8Array, agent: AgentSession): void {
    if (this.encoding === 'mulaw') agent.pushMulaw?.(mulaw);
    else agent.pushAudio?.(this.process(mulaw));
  }

  /**
   * Returns PCM at the agent's rate. The array is reused by the next call: consumers that keep
   * audio must copy it.
   */
  process(mulaw: Uint8Array): Int16Array {
    if (this.decoded.length < mulaw.length) this.decoded = new Int16Array(mulaw.length);
    const pcm8k = decodeMulaw(mulaw, this.decoded.subarray(0, mulaw.length));
    return this.resampler ? this.resampler.process(pcm8k) : pcm8k;
  }
}
