import { EventEmitter } from 'node:events';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  EngineError,
  observedAsr,
  observedLlm,
  observedSpeechToSpeech,
  observedTts,
  type SpeechToSpeechEngine,
  type SpeechToSpeechSession,
} from '@switchboard/inference';
import { EngineObservers, type EngineTarget } from './engine-observer';
import { CallEngineObserver } from '../agent-engines/call-engine-observer';
import { ATTR } from './span-attributes';
import { traceAgentEngine } from './traced-agent-engine';
import { callContext, doneEvent, engineErrors, fakeAsr, fakeLlm, fakeTts, inMemoryTracing, noOutput, RecordingAgentEngine, speak, think } from './tracing.test-support';

/** The call's one engine observer as the server builds it, watching the engine of `target`'s step. */
const observing = (target: EngineTarget, observers: EngineObservers): CallEngineObserver => new CallEngineObserver({ [target.step]: target }, observers);

const timeout = () => new EngineError('openai-stt', 'timeout', 'openai-stt: no answer within 10000 ms', true);
const cancelled = () => new EngineError('openai-chat', 'cancelled', 'openai-chat: cancelled', false);

/** A realtime session whose events the test emits. */
function fakeRealtime(connectError?: Error): { engine: SpeechToSpeechEngine; session: EventEmitter } {
  const session = new EventEmitter();
  const engine: SpeechToSpeechEngine = {
    name: 'openai-realtime',
    inputFormat: 'mulaw8k',
    outputFormat: 'mulaw8k',
    connect: async () => {
      if (connectError) throw connectError;
      return Object.assign(session, { callId: 'call-1', connectTimings: { totalMs: 120, attempts: 2 } }) as unknown as SpeechToSpeechSession;
    },
  };
  return { engine, session };
}

describe('engine request observers', () => {
  it('count every failure by provider and step, also for calls that are not traced', async () => {
    const { tracing, errors, registry, exporter } = inMemoryTracing();
    const observers = new EngineObservers(errors, tracing);
    const asr = observedAsr(fakeAsr(async () => Promise.reject(timeout())), observing({ step: 'stt', provider: 'openai', model: 'whisper-1' }, observers));
    const tts = observedTts(fakeTts(new EngineError('kokoro', 'inference_failed', 'kokoro: worker died', false)), observing({ step: 'tts', provider: 'kokoro' }, observers));

    await expect(asr.createSession({ callId: 'untraced' }).finish()).rejects.toThrow('no answer');
    await expect(speak(tts, 'Hello')).rejects.toThrow('worker died');

    expect(await engineErrors(registry, 'openai', 'stt')).toBe(1);
    // Failing both the iteration and `result` is one failure.
    expect(await engineErrors(registry, 'kokoro', 'tts')).toBe(1);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('do not count what the call cancelled (barge-in, hang-up)', async () => {
    const { tracing, errors, registry, exporter } = inMemoryTracing();
    traceAgentEngine(new RecordingAgentEngine(), tracing).createSession(callContext(), noOutput);
    const observers = new EngineObservers(errors, tracing);
    const llm = observedLlm(fakeLlm([{ events: [{ type: 'text', delta: 'We' }], error: cancelled() }]), observing({ step: 'llm', provider: 'custom' }, observers));
    const tts = observedTts(fakeTts(), observing({ step: 'tts', provider: 'openai' }, observers));

    await expect(think(llm)).rejects.toThrow('cancelled');
    tts.synthesize('A long answer', { callId: 'call-1' }).cancel();

    expect(await engineErrors(registry, 'custom', 'llm')).toBe(0);
    expect(await engineErrors(registry, 'openai', 'tts')).toBe(0);
    const spans = exporter.getFinishedSpans().filter((span) => span.name !== 'call');
    expect(spans.map((span) => [span.name, span.attributes[ATTR.cancelled], span.status.code])).toEqual([
      ['llm', true, SpanStatusCode.UNSET],
      ['tts', true, SpanStatusCode.UNSET],
    ]);
  });

  it('end an LLM span when the reply stops reading, with what the stream said so far', async () => {
    const { tracing, errors, exporter } = inMemoryTracing();
    traceAgentEngine(new RecordingAgentEngine(), tracing).createSession(callContext(), noOutput);
    const llm = observedLlm(fakeLlm([{ events: [{ type: 'tool_call', id: 't1', name: 'lookup_order', arguments: '{"orderId":"4567"}' }, doneEvent(true)] }]), observing({ step: 'llm', provider: 'openai', model: 'gpt-4o-mini' }, new EngineObservers(errors, tracing)));
    for await (const event of llm.stream({ callId: 'call-1', messages: [] })) if (event.type === 'done') break;
    const [span] = exporter.getFinishedSpans().filter((candidate) => candidate.name === 'llm');
    expect(span!.attributes).toMatchObject({ [ATTR.llmToolCalls]: 1, [ATTR.llmFinishReason]: ['tool_calls'], [ATTR.model]: 'gpt-4o-mini' });
    expect(JSON.stringify(span!.attributes)).not.toContain('4567');
  });

  it('watch a realtime session: connecting, each response, and the errors it reports', async () => {
    const { tracing, errors, registry, exporter } = inMemoryTracing();
    traceAgentEngine(new RecordingAgentEngine(), tracing).createSession(callContext(), noOutput);
    const observers = new EngineObservers(errors, tracing);
    const target = { step: 'realtime', provider: 'openai', model: 'gpt-realtime' } as const;
    const options = { callId: 'call-1', instructions: 'prompt', turnDetection: { type: 'server_vad' } } as const;

    const refused = observedSpeechToSpeech(fakeRealtime(new EngineError('openai-realtime', 'unauthorized', 'HTTP 401', false, { httpStatus: 401 })).engine, observing(target, observers));
    await expect(refused.connect(options)).rejects.toThrow('HTTP 401');
    const { engine, session } = fakeRealtime();
    await observedSpeechToSpeech(engine, observing(target, observers)).connect(options);
    const usage = { inputTextTokens: 10, inputAudioTokens: 90, inputCachedTokens: 0, inputCachedTextTokens: 0, inputCachedAudioTokens: 0, outputTextTokens: 5, outputAudioTokens: 50, totalTokens: 155 };
    session.emit('response_done', { responseId: 'resp_1', status: 'completed', usage, timings: { totalMs: 800, firstResultMs: 300 } });
    session.emit('response_done', { responseId: 'resp_2', status: 'failed', usage: undefined, timings: { totalMs: 100 } });
    session.emit('error', new EngineError('openai-realtime', 'unavailable', 'connection lost', true));

    expect(await engineErrors(registry, 'openai', 'realtime')).toBe(3);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.status.code])).toEqual([
      ['realtime.connect', SpanStatusCode.ERROR],
      ['realtime.connect', SpanStatusCode.UNSET],
      ['realtime.response', SpanStatusCode.UNSET],
      ['realtime.response', SpanStatusCode.ERROR],
    ]);
    expect(spans[0]!.attributes[ATTR.httpStatus]).toBe(401);
    expect(spans[1]!.attributes[ATTR.attempts]).toBe(2);
    expect(spans[2]!.attributes).toMatchObject({ [ATTR.inputTokens]: 100, [ATTR.outputTokens]: 55, [ATTR.realtimeStatus]: 'completed', [ATTR.firstResultMs]: 300 });
  });
});
