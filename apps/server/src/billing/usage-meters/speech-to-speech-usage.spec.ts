import {
  observedSpeechToSpeech,
  type SpeechToSpeechConnectOptions,
  type SpeechToSpeechEngine,
  type SpeechToSpeechSession,
  zeroUsage,
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

/** A connected realtime session whose running totals the test changes, as responses would. */
class FakeRealtimeSession implements SpeechToSpeechSession {
  readonly connectTimings = { totalMs: 1 };
  readonly usageTotals = zeroUsage();
  readonly isOpen = true;
  constructor(readonly callId: string) {}
  on(): this {
    return this;
  }
  off(): this {
    return this;
  }
  sendAudio(): boolean {
    return true;
  }
  submitToolResult(): void {}
  createResponse(): void {}
  cancelResponse(): boolean {
    return false;
  }
  truncate(): void {}
  async close(): Promise<void> {}
}
class FakeRealtimeEngine implements SpeechToSpeechEngine {
  readonly name = 'fake-realtime';
  readonly inputFormat = 'mulaw8k';
  readonly outputFormat = 'mulaw8k';
  readonly sessions: FakeRealtimeSession[] = [];
  async connect(options: SpeechToSpeechConnectOptions): Promise<SpeechToSpeechSession> {
    const session = new FakeRealtimeSession(options.callId);
    this.sessions.push(session);
    return session;
  }
}
const realtimeOptions = { callId: 'call-1', instructions: 'Be brief.', turnDetection: { type: 'server_vad' } } as const;

describe('usage of an observed speech-to-speech engine', () => {
  let registry: CallUsageRegistry;
  beforeEach(() => {
    registry = new CallUsageRegistry();
    registry.open('call-1');
  });

  it('returns the real session, whose totals are read at snapshot time and summed over reconnects', async () => {
    const engine = new FakeRealtimeEngine();
    const realtime = observedSpeechToSpeech(engine, meteredBy(registry));
    expect([realtime.name, realtime.inputFormat, realtime.outputFormat]).toEqual(['fake-realtime', 'mulaw8k', 'mulaw8k']);
    // The very object the engine made: listeners attached to it are the engine's own.
    expect(await realtime.connect(realtimeOptions)).toBe(engine.sessions[0]);
    const first = engine.sessions[0]!;
    first.usageTotals.outputAudioTokens = 300;
    expect(registry.meterFor('call-1')!.snapshot().realtimeAudioOutputTokens).toBe(300);

    expect(await realtime.connect(realtimeOptions)).toBe(engine.sessions[1]);
    const second = engine.sessions[1]!;
    first.usageTotals.outputAudioTokens = 320;
    second.usageTotals.outputAudioTokens = 80;
    second.usageTotals.inputTextTokens = 12;
    expect(registry.close('call-1')).toMatchObject({ realtimeAudioOutputTokens: 400, realtimeTextInputTokens: 12 });
  });

  it('connects a call with no open meter as usual, recording nothing', async () => {
    const engine = new FakeRealtimeEngine();
    expect(await observedSpeechToSpeech(engine, meteredBy(registry)).connect({ ...realtimeOptions, callId: 'other' })).toBe(engine.sessions[0]);
    engine.sessions[0]!.usageTotals.inputTextTokens = 50;
    expect(registry.close('call-1').realtimeTextInputTokens).toBe(0);
  });
});
