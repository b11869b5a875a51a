import { StreamingResampler } from '@switchboard/audio';
import type { AsrEngine, AsrSession } from '@switchboard/inference';

/** Caller audio as the call edge gives it to a pipeline agent (the VAD's native rate). */
const CALLER_SAMPLE_RATE = 8000;

/**
 * One caller turn's recognition: a recogniser session opened at the start of speech, fed from then
 * on through one resampler of its own (8 kHz caller audio to the recogniser's 16 kHz), so the
 * resampler's state never spans two turns and the hot path resamples only while someone speaks.
 */
export class TurnTranscription {
  private constructor(
    private readonly session: AsrSession,
    private readonly resampler: StreamingResampler,
  ) {}

  /** Opens the session and feeds it `backlog`: the turn's audio heard before speech was detected. */
  static open(
    asr: AsrEngine,
    options: { callId: string; language?: string; prompt?: string },
    backlog: Int16Array,
    onStablePartial: (text: string) => void,
  ): TurnTranscription {
    const session = asr.createSession(options);
    session.onPartial((partial) => {
      if (partial.stable) onStablePartial(partial.text);
    });
    const transcription = new TurnTranscription(session, new StreamingResampler({ inputRate: CALLER_SAMPLE_RATE, outputRate: asr.sampleRate }));
    transcription.push(backlog);
    return transcription;
  }

  /** Live caller audio (8 kHz), while the turn lasts. */
  push(pcm: Int16Array): void {
    this.session.pushAudio(this.resampler.process(pcm));
  }

  /** The turn ended: the resampler's tail goes in, and the final transcript, trimmed, comes back. */
  async finish(): Promise<string> {
    this.session.pushAudio(this.resampler.flush());
    return (await this.session.finish()).text.trim();
  }

  cancel(): void {
    this.session.cancel();
  }
}
