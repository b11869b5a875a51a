import { InMemoryConversationRecorder, type TurnLatencyRecord } from '@switchboard/conversation';
import { Registry } from 'prom-client';
import { CallMetrics } from './call-metrics';
import type { MetricsRegistry } from './metrics.registry';
import { WaterfallObservingRecorder } from './waterfall-observing-recorder';

const EMPTY: Omit<TurnLatencyRecord, 'turnIndex'> = {
  endOfSpeechMs: null,
  endOfTurnFrameMs: null,
  endOfTurnMs: null,
  asrFinalMs: null,
  llmFirstTokenMs: null,
  ttsFirstByteMs: null,
  firstFrameSentMs: null,
  firstMarkEchoedMs: null,
  interruptedAtMs: null,
};
const piece = (turnIndex: number, fields: Partial<TurnLatencyRecord>): TurnLatencyRecord => ({ ...EMPTY, ...fields, turnIndex });

describe('WaterfallObservingRecorder', () => {
  it('passes every record on and hands over a waterfall once, merged, when its first mark came back', () => {
    const inner = new InMemoryConversationRecorder();
    const heard: TurnLatencyRecord[] = [];
    const recorder = new WaterfallObservingRecorder(inner, (waterfall) => heard.push(waterfall));
    recorder.turnLatency(piece(1, { endOfSpeechMs: 1000, endOfTurnMs: 1300, asrFinalMs: 1350 }));
    recorder.turnLatency(piece(1, { llmFirstTokenMs: 1500, ttsFirstByteMs: 1600, firstFrameSentMs: 1610 }));
    expect(heard).toEqual([]);
    recorder.turnLatency(piece(1, { firstMarkEchoedMs: 1700 }));
    recorder.turnLatency(piece(1, { interruptedAtMs: 2500 }));
    expect(heard).toEqual([piece(1, { endOfSpeechMs: 1000, endOfTurnMs: 1300, asrFinalMs: 1350, llmFirstTokenMs: 1500, ttsFirstByteMs: 1600, firstFrameSentMs: 1610, firstMarkEchoedMs: 1700 })]);
    expect(inner.latencies).toHaveLength(4);
  });

  it('does not observe a reply cut before the caller heard any of it', () => {
    const heard: TurnLatencyRecord[] = [];
    const recorder = new WaterfallObservingRecorder(new InMemoryConversationRecorder(), (waterfall) => heard.push(waterfall));
    recorder.turnLatency(piece(2, { endOfSpeechMs: 1000, firstFrameSentMs: 1400 }));
    recorder.turnLatency(piece(2, { interruptedAtMs: 1420 }));
    recorder.turnLatency(piece(2, { firstMarkEchoedMs: 1500 }));
    expect(heard).toEqual([]);
  });
});

describe('CallMetrics', () => {
  it('observes the reply latency and each waterfall step, and counts admissions by outcome', async () => {
    const registry = new Registry();
    const metrics = new CallMetrics({ registry } as unknown as MetricsRegistry);
    metrics.turnCompleted(piece(1, { endOfSpeechMs: 1000, endOfTurnMs: 1300, asrFinalMs: 1350, llmFirstTokenMs: 1500, ttsFirstByteMs: 1600, firstFrameSentMs: 1610, firstMarkEchoedMs: 1700 }));
    metrics.admitted('inbound');
    metrics.refused('inbound', 'concurrency_limit');
    const text = await registry.metrics();
    expect(text).toMatch(/^switchboard_reply_latency_seconds_sum 0\.7$/m);
    expect(text).toMatch(/^switchboard_turn_step_seconds_sum\{step="turn_decided"\} 0\.3$/m);
    expect(text).toMatch(/^switchboard_turn_step_seconds_sum\{step="llm_first_token"\} 0\.15$/m);
    expect(text).toMatch(/^switchboard_turn_step_seconds_sum\{step="first_mark"\} 0\.09$/m);
    expect(text).toMatch(/^switchboard_call_admissions_total\{direction="inbound",outcome="admitted"\} 1$/m);
    expect(text).toMatch(/^switchboard_call_admissions_total\{direction="inbound",outcome="concurrency_limit"\} 1$/m);
  });
});
