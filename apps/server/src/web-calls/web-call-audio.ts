import { decodeMulaw, encodeMulaw, StreamingResampler } from '@switchboard/audio';
import type { AgentAudioEncoding, AgentAudioOutput, AgentSession } from '@switchboard/conversation';
import { WEB_CALL_AUDIO } from './web-call-protocol';

const MULAW_RATE = 8_000;

/**
 * Caller audio from the browser (PCM16 at 16 kHz) to the agent in the form it declared: PCM at its
 * input rate, or mu-law at 8 kHz. One per call, so the resampler's state spans messages.
 */
export class WebAudioInput {
  private readonly resampler: StreamingResampler | undefined;
  private encoded = new Uint8Array(160);

  constructor(
    readonly agentSampleRate: number,
    readonly encoding: AgentAudioEncoding = 'pcm16',
  ) {
    const target = encoding === 'mulaw' ? MULAW_RATE : agentSampleRate;
    this.resampler = target === WEB_CALL_AUDIO.sampleRate ? undefined : new StreamingResampler({ inputRate: WEB_CALL_AUDIO.sampleRate, outputRate: target });
  }

  checkAgent(agent: AgentSession): void {
    const method = this.encoding === 'mulaw' ? 'pushMulaw' : 'pushAudio';
    if (typeof agent[method] !== 'function') throw new TypeError(`the agent declares ${this.encoding} input but has no ${method}()`);
  }

  /** `pcm16k` may be reused by the caller after this returns; the agent copies what it keeps. */
  deliver(pcm16k: Int16Array, agent: AgentSession): void {
    const pcm = this.resampler ? this.resampler.process(pcm16k) : pcm16k;
    if (this.encoding !== 'mulaw') {
      agent.pushAudio?.(pcm);
      return;
    }
    if (this.encoded.length < pcm.length) this.encoded = new Uint8Array(pcm.length);
    agent.pushMulaw?.(encodeMulaw(pcm, this.encoded.subarray(0, pcm.length)));
  }
}

/** Where browser-bound audio goes: the web call session frames it (see WebCallSession). */
export interface PcmSink {
  sendPcm(pcm16k: Int16Array): void;
  sendMark(name: string): void;
  endOfUtterance(): void;
  clear(): void;
}

/** The agent's speech to the browser: PCM16 at 16 kHz whatever the agent speaks (PCM at its rate, or mu-law). */
export class WebAudioOutput implements AgentAudioOutput {
  private readonly resampler: StreamingResampler | undefined;
  private decoded = new Int16Array(160);

  constructor(
    readonly agentSampleRate: number,
    private readonly sink: PcmSink,
    readonly encoding: AgentAudioEncoding = 'pcm16',
  ) {
    const source = encoding === 'mulaw' ? MULAW_RATE : agentSampleRate;
    this.resampler = source === WEB_CALL_AUDIO.sampleRate ? undefined : new StreamingResampler({ inputRate: source, outputRate: WEB_CALL_AUDIO.sampleRate });
  }

  play(pcm: Int16Array): void {
    if (this.encoding === 'mulaw') throw new TypeError('this agent declared mu-law output: use playMulaw()');
    this.send(pcm);
  }

  playMulaw(mulaw: Uint8Array): void {
    if (this.encoding !== 'mulaw') throw new TypeError('this agent declared PCM output: use play()');
    if (this.decoded.length < mulaw.length) this.decoded = new Int16Array(mulaw.length);
    this.send(decodeMulaw(mulaw, this.decoded.subarray(0, mulaw.length)));
  }

  mark(name: string): void {
    this.sink.sendMark(name);
  }

  endOfUtterance(): void {
    // The filter's tail belongs to this utterance (see TelephonyAudioOutput).
    if (this.resampler) this.sendResampled(this.resampler.flush());
    this.sink.endOfUtterance();
  }

  clear(): void {
    this.resampler?.reset();
    this.sink.clear();
  }

  private send(pcm: Int16Array): void {
    this.sendResampled(this.resampler ? this.resampler.process(pcm) : pcm);
  }

  private sendResampled(pcm16k: Int16Array): void {
    if (pcm16k.length > 0) this.sink.sendPcm(pcm16k);
  }
}
