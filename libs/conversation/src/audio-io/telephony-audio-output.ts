import { encodeMulaw, StreamingResampler } from '@switchboard/audio';
import type { AgentAudioOutput } from '../agent/agent-session';
import { TELEPHONY_SAMPLE_RATE } from './telephony-audio-input';

/**
 * Where encoded call audio goes: the media-stream session, which cuts it into 20 ms (160-byte)
 * `media` messages, places marks after everything queued before them, and sends `clear`.
 */
export interface MulawSink {
  sendAudio(mulaw: Uint8Array): void;
  sendMark(name: string): void;
  clear(): void;
}

/**
 * Outbound half of the call's audio chain: agent PCM16 at its output rate -> 8 kHz -> mu-law -> sink.
 * One instance per call, so the resampler's state spans the agent's chunks.
 */
export class TelephonyAudioOutput implements AgentAudioOutput {
  private readonly resampler: StreamingResampler | undefined;
  private encoded = new Uint8Array(160);

  constructor(
    readonly agentSampleRate: number,
    private readonly sink: MulawSink,
  ) {
    this.resampler =
      agentSampleRate === TELEPHONY_SAMPLE_RATE
        ? undefined
        : new StreamingResampler({ inputRate: agentSampleRate, outputRate: TELEPHONY_SAMPLE_RATE });
  }

  play(pcm: Int16Array): void {
    const pcm8k = this.resampler ? this.resampler.process(pcm) : pcm;
    if (pcm8k.length === 0) return;
    if (this.encoded.length < pcm8k.length) this.encoded = new Uint8Array(pcm8k.length);
    this.sink.sendAudio(encodeMulaw(pcm8k, this.encoded.subarray(0, pcm8k.length)));
  }

  mark(name: string): void {
    this.sink.sendMark(name);
  }

  clear(): void {
    // The filter tail belongs to audio the caller will now never hear; start the next reply clean.
    this.resampler?.reset();
    this.sink.clear();
  }
}
