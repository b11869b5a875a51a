import { decodeMulaw, StreamingResampler } from '@switchboard/audio';

/** Twilio media streams carry G.711 mu-law at 8 kHz. */
export const TELEPHONY_SAMPLE_RATE = 8_000;

/**
 * Inbound half of the call's audio chain: mu-law bytes from the wire -> PCM16 at 8 kHz ->
 * PCM16 at the agent's input rate. One instance per call: the resampler keeps filter state across
 * frames so 20 ms frame boundaries add nothing audible.
 */
export class TelephonyAudioInput {
  private readonly resampler: StreamingResampler | undefined;
  private decoded = new Int16Array(160);

  constructor(readonly agentSampleRate: number) {
    this.resampler =
      agentSampleRate === TELEPHONY_SAMPLE_RATE
        ? undefined
        : new StreamingResampler({ inputRate: TELEPHONY_SAMPLE_RATE, outputRate: agentSampleRate });
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
