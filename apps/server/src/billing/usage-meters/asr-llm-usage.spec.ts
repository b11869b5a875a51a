import {
  type AsrEngine,
  type AsrPartial,
  type AsrResult,
  type AsrSession,
  EngineError,
  type LlmEngine,
  type LlmEvent,
  type LlmRequest,
  type LlmUsage,
  observedAsr,
  observedLlm,
} from '@switchboard/inference';
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

/** Transcribes by counting samples; a cancelled session's finish() rejects, as the real ones do. */
class CountingAsrSession implements AsrSession {
  private samples = 0;
  private cancelled = false;
  private readonly listeners: ((partial: AsrPartial) => void)[] = [];
  pushAudio(pcm16k: Int16Array): void {
    this.samples += pcm16k.length;
    for (const listener of this.listeners) listener({ text: `${this.samples} samples`, stable: false });
  }
  onPartial(listener: (partial: AsrPartial) => void): void {
    this.listeners.push(listener);
  }
  async finish(): Promise<AsrResult> {
    if (this.cancelled) throw new EngineError('counting-asr', 'cancelled', 'cancelled', false);
    return { text: 'hello', audioSeconds: this.samples / 16_000, timings: { totalMs: 1 } };
  }
  cancel(): void {
    this.cancelled = true;
  }
}
const countingAsr: AsrEngine = { name: 'counting-asr', sampleRate: 16_000, supportsPartials: true, createSession: () => new CountingAsrSession() };

/** Replies "ok" then 'done' with the usage it was given; counts the streams whose generator finished (finally). */
class ScriptedLlm implements LlmEngine {
  readonly name = 'scripted-llm';
  closedStreams = 0;
  constructor(private readonly usage: LlmUsage | null) {}
  async *stream(_request: LlmRequest): AsyncGenerator<LlmEvent> {
    try {
      yield { type: 'text', delta: 'ok' };
      yield { type: 'done', finishReason: 'stop', usage: this.usage, timings: { totalMs: 1 } };
    } finally {
      this.closedStreams += 1;
    }
  }
}

async function drain(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const seen: LlmEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('usage of observed ASR and LLM engines', () => {
  let registry: CallUsageRegistry;
  beforeEach(() => {
    registry = new CallUsageRegistry();
    registry.open('call-1');
  });

  it('ASR: charges the audio of each finished utterance, delegates the rest, and nothing for a cancelled one', async () => {
    const asr = observedAsr(countingAsr, meteredBy(registry));
    expect([asr.name, asr.sampleRate, asr.supportsPartials]).toEqual(['counting-asr', 16_000, true]);
    const partials: string[] = [];
    const first = asr.createSession({ callId: 'call-1' });
    first.onPartial((partial) => partials.push(partial.text));
    first.pushAudio(new Int16Array(16_000));
    first.pushAudio(new Int16Array(8000));
    expect(await first.finish()).toMatchObject({ text: 'hello', audioSeconds: 1.5 });
    const second = asr.createSession({ callId: 'call-1' });
    second.pushAudio(new Int16Array(4000));
    await second.finish();
    const cancelled = asr.createSession({ callId: 'call-1' });
    cancelled.pushAudio(new Int16Array(16_000));
    cancelled.cancel();
    await expect(cancelled.finish()).rejects.toMatchObject({ code: 'cancelled' });

    expect(partials).toEqual(['16000 samples', '24000 samples']);
    expect(registry.close('call-1').sttAudioMs).toBe(1750);
  });

  it('LLM: re-yields every event and sums the usage of each reply', async () => {
    const llm = observedLlm(new ScriptedLlm({ inputTokens: 500, cachedInputTokens: 256, outputTokens: 30 }), meteredBy(registry));
    const events = await drain(llm.stream({ callId: 'call-1', messages: [{ role: 'user', content: 'hi' }] }));
    await drain(llm.stream({ callId: 'call-1', messages: [{ role: 'user', content: 'again' }] }));
    await drain(observedLlm(new ScriptedLlm(null), meteredBy(registry)).stream({ callId: 'call-1', messages: [] }));

    expect(events.map((event) => event.type)).toEqual(['text', 'done']);
    expect(registry.close('call-1')).toMatchObject({ llmInputTokens: 1000, llmCachedInputTokens: 512, llmOutputTokens: 60 });
  });

  it('LLM: a consumer that breaks out closes the engine stream (and is not charged a reply it never got)', async () => {
    const inner = new ScriptedLlm({ inputTokens: 500, cachedInputTokens: 0, outputTokens: 30 });
    for await (const event of observedLlm(inner, meteredBy(registry)).stream({ callId: 'call-1', messages: [] })) if (event.type === 'text') break;

    expect(inner.closedStreams).toBe(1);
    expect(registry.close('call-1').llmInputTokens).toBe(0);
  });

  it('serves calls with no open meter as usual, recording nothing', async () => {
    const session = observedAsr(countingAsr, meteredBy(registry)).createSession({ callId: 'other' });
    session.pushAudio(new Int16Array(1600));
    await expect(session.finish()).resolves.toMatchObject({ audioSeconds: 0.1 });
    expect(await drain(observedLlm(new ScriptedLlm({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 }), meteredBy(registry)).stream({ callId: 'other', messages: [] }))).toHaveLength(2);
    expect(registry.close('call-1')).toMatchObject({ sttAudioMs: 0, llmInputTokens: 0 });
  });
});
