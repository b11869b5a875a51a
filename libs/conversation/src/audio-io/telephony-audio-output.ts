import { encodeMulaw, StreamingResampler } from '@switchboard/audio';
import type { AgentAudioEncoding, AgentAudioOutput } from '../agent/agent-session';
import { TELEPHONY_SAMPLE_RATE } from './telephony-audio-input';

/**
 * Where encoded call audio goes: the media-stream session, which cuts it into 20 ms (160-byte)
 * `media` messages, places marks on frame boundaries, pads only at the end of an utterance, and
 * sends `clear`. sendAudio copies what it is given before returning.
 */
export interface MulawSink {
  sendAudio(mulaw: Uint8Array): void;
  sendMark(name: string): void;
  endOfUtterance(): void;
  clear(): void;
}

/**
 * Outbound half of the call's audio chain. For a PCM agent: PCM16 at its output rate -> 8 kHz ->
 * mu-law -> sink, one instance per call so the resampler's state spans the agent's chunks. For a
 * mu-law agent: its bytes go to the sink untouched.
 */
export class TelephonyAudioOutput implements AgentAudioOutput {
  private readonly resampler: StreamingResampler | undefined;
  private encoded = new Uint8Array(160);

  constructor(
    readonly agentSampleRate: number,
    private readonly sink: MulawSink,
    readonly encoding: AgentAudioEncoding = 'pcm16',
  ) {
    if (encoding === 'mulaw' && agentSampleRate !== TELEPHONY_SAMPLE_RATE) {
      throw new RangeError(`a mu-law agent speaks at ${TELEPHONY_SAMPLE_RATE} Hz, not ${agentSampleRate} Hz`);
    }
    this.resampler =
      encoding === 'mulaw' || agentSampleRate === TELEPHONY_SAMPLE_RATE
        ? undefined
        : new StreamingResampler({ inputRate: agentSampleRate, outputRate: TELEPHONY_SAMPLE_RATE });
  }

  play(pcm: Int16Array): void {
    if (this.encoding === 'mulaw') throw new TypeError('this agent declared mu-law output: use playMulaw()');
    this.sendPcm(this.resampler ? this.resampler.process(pcm) : pcm);
  }

  playMulaw(mulaw: Uint8Array): void {
    if (this.encoding !== 'mulaw') throw new TypeError('this agent declared PCM output: use play()');
    if (mulaw.length > 0) this.sink.sendAudio(mulaw);
  }

  mark(name: string): void {
    this.sink.sendMark(name);
  }

  endOfUtterance(): void {
    // The filter still holds the utterance's last few milliseconds (its group delay): they belong
    // to this utterance, not to the start of the next one.
    if (this.resampler) this.sendPcm(this.resampler.flush());
    this.sink.endOfUtterance();
  }

  clear(): void {
    // The filter tail belongs to audio the caller will now never hear; start the next reply clean.
    this.resampler?.reset();
    this.sink.clear();
  }

  private sendPcm(pcm8k: Int16Array): void {
    if (pcm8k.length === 0) return;
    if (this.encoded.length < pcm8k.length) this.encoded = new Uint8Array(pcm8k.length);
    this.sink.sendAudio(encodeMulaw(pcm8k, this.encoded.subarray(0, pcm8k.length)));
  }
}
