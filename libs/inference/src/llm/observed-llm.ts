import type { CapabilityObserver } from '../contracts/capability-observer';
import type { LlmEngine, LlmEvent, LlmRequest } from './llm-engine';

/**
 * The LLM engine whose every request is reported to `observer`: its usage and timings at `done`
 * (before the consumer sees it, so a consumer that stops there is still billed), its failure, and
 * its end. Every event is handed on untouched.
 */
export function observedLlm(engine: LlmEngine, observer: CapabilityObserver): LlmEngine {
  return {
    name: engine.name,
    async *stream(request: LlmRequest): AsyncGenerator<LlmEvent> {
      const report = observer.completion({ callId: request.callId, engineName: engine.name });
      let toolCalls = 0;
      try {
        // for-await: a consumer that stops early returns this generator, which returns (closes) the engine's stream.
        for await (const event of engine.stream(request)) {
          if (event.type === 'tool_call') toolCalls += 1;
          if (event.type === 'done') report.done(event, toolCalls);
          yield event;
        }
      } catch (error) {
        report.failed(error);
        throw error;
      } finally {
        // Reached without `done` only when the consumer stopped reading (a barge-in).
        report.ended(request.signal?.aborted === true);
      }
    },
  };
}
