import { type AsrEngine, type AsrPartial, type AsrResult, type AsrSession, EngineError } from '@switchboard/inference';
import { questionText, type EngineDelayLog } from './engine-delay-log';
import { waitUntil } from './precise-wait';

const ASR_SAMPLE_RATE = 16000;

/**
 * A recogniser with a scripted delay: finish() answers `delayMs` after it is called, with the
 * call's next "question N". No partials, so the session never speculates and every reply starts
 * from the final transcript (the path the delays are subtracted from).
 */
export class FakeAsrEngine implements AsrEngine {
  readonly name = 'fake-asr';
  readonly sampleRate = ASR_SAMPLE_RATE;
  readonly supportsPartials = false;

  constructor(
    private readonly delayMs: number,
    private readonly log: EngineDelayLog,
  ) {}

  createSession(options: { callId: string }): AsrSession {
    return new FakeAsrSession(options.callId, this.delayMs, this.log);
  }
}

class FakeAsrSession implements AsrSession {
  private samples = 0;
  private readonly controller = new AbortController();

  constructor(
    private readonly callId: string,
    private readonly delayMs: number,
    private readonly log: EngineDelayLog,
  ) {}

  pushAudio(pcm16k: Int16Array): void {
    this.samples += pcm16k.length;
  }

  onPartial(_listener: (partial: AsrPartial) => void): void {}

  async finish(): Promise<AsrResult> {
    const startedAt = performance.now();
    const question = this.log.nextQuestion(this.callId);
    await waitUntil(startedAt + this.delayMs, this.controller.signal);
    if (this.controller.signal.aborted) throw new EngineError('fake-asr', 'cancelled', 'fake-asr: cancelled', false);
    const actualMs = performance.now() - startedAt;
    this.log.asrFinished(this.callId, question, actualMs);
    return { text: questionText(question), language: 'en', timings: { firstResultMs: actualMs, totalMs: actualMs }, audioSeconds: this.samples / ASR_SAMPLE_RATE };
  }

  cancel(): void {
    this.controller.abort();
  }
}
