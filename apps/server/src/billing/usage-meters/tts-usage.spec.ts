import { EngineError, observedTts, type TtsEngine, type TtsResult, type TtsStream } from '@switchboard/inference';
import { CallEngineObserver } from '../../agent-engines/call-engine-observer';
import { EngineObservers } from '../../tracing/engine-observer';
import { CallUsageRegistry } from './call-usage-registry';

/** The call's one engine observer as the server builds it; no call is traced here, so only its meter shows. */
const meteredBy = (registry: CallUsageRegistry): CallEngineObserver =>
  new CallEngineObserver(
    { stt: { step: 'stt', provider: 'local' }, llm: { step: 'llm', provider: 'local' }, tts: { step: 'tts', provider: 'local' }, realtime: { step: 'realtime', provider: 'openai' } },
    new EngineObservers({ failed: () => undefined }, { find: () => undefined }),
    registry,
  );

const SAMPLE_RATE = 16_000;

interface TtsScript {
  chunkSizes: number[];
  /** Fail before yielding this chunk. */
  failAt?: number;
  /** Cancelling leaves `result` pending (the contract does not promise it rejects). */
  resultPendingOnCancel?: boolean;
}

/**
 * A synthesis that yields chunks of the scripted sizes. Like the real streams: cancelling (or the
 * consumer breaking out) ends the loop quietly and rejects `result`; the engine reports the
 * trimmed text as its billed characters.
 */
class ScriptedTtsStream implements TtsStream {
  readonly sampleRate = SAMPLE_RATE;
  readonly result: Promise<TtsResult>;
  private settle!: { resolve: (result: TtsResult) => void; reject: (error: EngineError) => void };
  private settled = false;

  constructor(
    private readonly text: string,
    private readonly script: TtsScript,
  ) {
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Int16Array> {
    try {
      const { chunkSizes, failAt } = this.script;
      for (let index = 0; index < chunkSizes.length; index++) {
        if (this.settled) return; // cancelled while the consumer held the last chunk
        if (index === failAt) {
          const failure = new EngineError('scripted-tts', 'inference_failed', 'synthesis failed', false);
          this.finish(failure);
          throw failure;
        }
        yield new Int16Array(chunkSizes[index]!);
      }
      const samples = chunkSizes.reduce((sum, size) => sum + size, 0);
      this.finish({ characters: this.text.trim().length, audioSeconds: samples / SAMPLE_RATE, timings: { totalMs: 1 } });
    } finally {
      this.cancel();
    }
  }

  cancel(): void {
    if (this.script.resultPendingOnCancel) this.settled = true;
    else this.finish(new EngineError('scripted-tts', 'cancelled', 'synthesis cancelled', false));
  }

  private finish(outcome: TtsResult | EngineError): void {
    if (this.settled) return;
    this.settled = true;
    if (outcome instanceof EngineError) this.settle.reject(outcome);
    else this.settle.resolve(outcome);
  }
}

const scriptedTts = (script: TtsScript): TtsEngine => ({ name: 'scripted-tts', sampleRate: SAMPLE_RATE, synthesize: (text) => new ScriptedTtsStream(text, script) });

describe('usage of an observed TTS engine', () => {
  let registry: CallUsageRegistry;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): number => unhandled.push(reason);
  beforeEach(() => {
    registry = new CallUsageRegistry();
    registry.open('call-1');
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => process.off('unhandledRejection', onUnhandled));
  const settleEverything = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('charges a completed synthesis the figures the engine reported, once', async () => {
    const engine = observedTts(scriptedTts({ chunkSizes: [8000, 16_000] }), meteredBy(registry));
    expect([engine.name, engine.sampleRate]).toEqual(['scripted-tts', SAMPLE_RATE]);
    const stream = engine.synthesize('  Hello there.  ', { callId: 'call-1' });
    const chunks: Int16Array[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(await stream.result).toMatchObject({ characters: 12, audioSeconds: 1.5 });
    stream.cancel(); // a late cancel (barge-in after the last chunk) must not charge again
    await settleEverything();

    expect(chunks.map((chunk) => chunk.length)).toEqual([8000, 16_000]);
    expect(registry.close('call-1')).toMatchObject({ ttsCharacters: 12, ttsAudioMs: 1500 });
  });

  it('charges a cancelled synthesis (barge-in) the whole text and only the audio yielded', async () => {
    const stream = observedTts(scriptedTts({ chunkSizes: [4000, 4000, 4000] }), meteredBy(registry)).synthesize('  Hello there.  ', { callId: 'call-1' });
    let received = 0;
    for await (const chunk of stream) {
      received += chunk.length;
      stream.cancel();
    }
    await expect(stream.result).rejects.toMatchObject({ code: 'cancelled' });
    await settleEverything();

    expect(received).toBe(4000);
    expect(registry.close('call-1')).toMatchObject({ ttsCharacters: 16, ttsAudioMs: 250 });
    expect(unhandled).toEqual([]);
  });

  it('charges a cancel at once, even when the engine leaves `result` pending', async () => {
    const stream = observedTts(scriptedTts({ chunkSizes: [4000, 4000], resultPendingOnCancel: true }), meteredBy(registry)).synthesize('Stop', { callId: 'call-1' });
    for await (const _chunk of stream) stream.cancel();

    expect(registry.close('call-1')).toMatchObject({ ttsCharacters: 4, ttsAudioMs: 250 });
  });

  it('charges a consumer that breaks out of the loop for what it received, and closes the engine stream', async () => {
    const stream = observedTts(scriptedTts({ chunkSizes: [8000, 8000, 8000] }), meteredBy(registry)).synthesize('Hi', { callId: 'call-1' });
    for await (const chunk of stream) if (chunk.length > 0) break;
    // The engine's stream was returned (its finally cancelled it): `result` rejected, nobody awaited it.
    await settleEverything();

    expect(registry.close('call-1')).toMatchObject({ ttsCharacters: 2, ttsAudioMs: 500 });
    expect(unhandled).toEqual([]);
  });

  it('charges a failing synthesis the whole text and the audio before the failure, with no unhandled rejection', async () => {
    const stream = observedTts(scriptedTts({ chunkSizes: [4000, 4000, 4000], failAt: 2 }), meteredBy(registry)).synthesize('Hello', { callId: 'call-1' });
    let received = 0;
    const iterate = async (): Promise<void> => {
      for await (const chunk of stream) received += chunk.length;
    };
    await expect(iterate()).rejects.toMatchObject({ code: 'inference_failed' });
    await settleEverything();

    expect(received).toBe(8000);
    expect(registry.close('call-1')).toMatchObject({ ttsCharacters: 5, ttsAudioMs: 500 });
    expect(unhandled).toEqual([]);
  });

  it('serves a call with no open meter unmetered', async () => {
    const stream = observedTts(scriptedTts({ chunkSizes: [1600] }), meteredBy(registry)).synthesize('Hi', { callId: 'unknown' });
    for await (const chunk of stream) expect(chunk).toHaveLength(1600);
    await expect(stream.result).resolves.toMatchObject({ characters: 2 });
    expect(registry.close('call-1')).toMatchObject({ ttsCharacters: 0, ttsAudioMs: 0 });
  });
});
