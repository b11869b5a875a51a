import {
  type AgentAudioOutput,
  type AgentCallContext,
  type AgentEngine,
  type AgentSession,
  type ConversationRecorder,
  InMemoryConversationRecorder,
} from '@switchboard/conversation';
import type { AsrEngine, LlmEngine, LlmEvent, TtsEngine, TtsResult, TtsStream } from '@switchboard/inference';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { EngineErrorMetrics } from '../metrics/engine-error-metrics';
import type { MetricsRegistry } from '../metrics/metrics.registry';
import { CallTracing } from './call-tracing';

/** Spans kept in memory (exported as each ends), an error counter on a registry of its own. */
export function inMemoryTracing(): { tracing: CallTracing; exporter: InMemorySpanExporter; errors: EngineErrorMetrics; registry: Registry } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = new CallTracing({ tracer: provider.getTracer('test'), shutdown: () => provider.shutdown() });
  const registry = new Registry();
  const errors = new EngineErrorMetrics({ registry } as unknown as MetricsRegistry);
  return { tracing, exporter, errors, registry };
}

/** The value of switchboard_engine_errors_total{provider, step}, 0 when never counted. */
export async function engineErrors(registry: Registry, provider: string, step: string): Promise<number> {
  const metric = await registry.getSingleMetric('switchboard_engine_errors_total')?.get();
  return metric?.values.find((value) => value.labels['provider'] === provider && value.labels['step'] === step)?.value ?? 0;
}

export const spanId = (span: ReadableSpan | undefined): string | undefined => span?.spanContext().spanId;
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** An agent engine that keeps each session's context, so a test writes records as the agent would. */
export class RecordingAgentEngine implements AgentEngine {
  readonly name = 'pipeline';
  readonly audio = { inputSampleRate: 8000, outputSampleRate: 16000 };
  readonly contexts: AgentCallContext[] = [];
  readonly closed: string[] = [];

  createSession(context: AgentCallContext): AgentSession {
    this.contexts.push(context);
    return { pushAudio: () => undefined, onDtmf: () => undefined, onMarkEchoed: () => undefined, close: (reason) => void this.closed.push(reason) };
  }
}

export function callContext(overrides: Partial<AgentCallContext> = {}): AgentCallContext & { recorder: ConversationRecorder } {
  return {
    callId: 'call-1',
    organizationId: 'org-1',
    agentId: 'agent-1',
    agentConfigVersion: 3,
    config: {},
    streamParameters: {},
    direction: 'inbound',
    callerNumber: '+15550001111',
    calledNumber: '+15550002222',
    callStartedAt: new Date(Date.now() - 5_000),
    recorder: new InMemoryConversationRecorder(),
    callControl: { hangUp: async () => undefined, transfer: async () => undefined, warmTransfer: async () => undefined },
    endCall: () => undefined,
    ...overrides,
  };
}

export const noOutput: AgentAudioOutput = { play: () => undefined, playMulaw: () => undefined, mark: () => undefined, endOfUtterance: () => undefined, clear: () => undefined };

export const fakeAsr = (text: () => Promise<string>): AsrEngine => ({
  name: 'openai-stt',
  sampleRate: 16000,
  supportsPartials: false,
  createSession: () => ({
    pushAudio: () => undefined,
    onPartial: () => undefined,
    finish: async () => ({ text: await text(), timings: { totalMs: 40, attempts: 1 }, audioSeconds: 1.5 }),
    cancel: () => undefined,
  }),
});

/** Each request plays the next script: events to yield, then (optionally) an error to throw. */
export const fakeLlm = (scripts: { events: LlmEvent[]; error?: Error }[]): LlmEngine => ({
  name: 'openai-chat',
  async *stream() {
    const script = scripts.shift() ?? { events: [] };
    for (const event of script.events) yield event;
    if (script.error) throw script.error;
  },
});

export const doneEvent = (toolCalls = false): LlmEvent => ({
  type: 'done',
  finishReason: toolCalls ? 'tool_calls' : 'stop',
  usage: { inputTokens: 30, cachedInputTokens: 0, outputTokens: 8 },
  timings: { totalMs: 90, firstResultMs: 25, attempts: 1 },
});

/** Like a real engine's, `result` settles once the last chunk was yielded (or the synthesis failed). */
export const fakeTts = (failure?: Error): TtsEngine => ({
  name: 'openai-tts',
  sampleRate: 24000,
  synthesize: (text): TtsStream => {
    let settle: { resolve(result: TtsResult): void; reject(error: Error): void } | undefined;
    const result = new Promise<TtsResult>((resolve, reject) => (settle = { resolve, reject }));
    result.catch(() => undefined);
    return {
      sampleRate: 24000,
      result,
      cancel: () => undefined,
      async *[Symbol.asyncIterator]() {
        yield new Int16Array(480);
        if (failure) {
          settle!.reject(failure);
          throw failure;
        }
        settle!.resolve({ timings: { totalMs: 30, firstResultMs: 10 }, characters: text.length, audioSeconds: 0.5 });
      },
    };
  },
});

/** Reads a TTS stream as the speech queue does: every chunk, then the result. */
export async function speak(tts: TtsEngine, text: string): Promise<void> {
  const stream = tts.synthesize(text, { callId: 'call-1' });
  for await (const _chunk of stream) {
    // drained
  }
  await stream.result;
}

/** Reads an LLM stream to its end, as a reply does. */
export async function think(llm: LlmEngine): Promise<void> {
  for await (const _event of llm.stream({ callId: 'call-1', messages: [] })) {
    // drained
  }
}

/** Lets the turns settled in this tick end (they end on the next one). */
export const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));
