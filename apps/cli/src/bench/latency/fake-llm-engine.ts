import type { LlmEngine, LlmEvent, LlmRequest } from '@switchboard/inference';
import { questionNumberIn, type EngineDelayLog } from './engine-delay-log';
import { waitUntil } from './precise-wait';

/**
 * The answer, as the model's deltas. The first delta carries a whole first clause and the start
 * of the next word, so the speakable chunker cuts the first chunk the moment it arrives: the
 * model's time to its first token is then exactly its time to the first speakable text, and no
 * wait for a later delta is booked as platform time.
 */
const ANSWER_DELTAS = ['Thanks for calling about that, let', ' me check it for you.', ' Your order shipped yesterday', ' and should arrive on Friday.', ' Is there anything else?'];

/** A model with scripted timing: the first delta `firstTokenMs` after the request, the rest `deltaIntervalMs` apart. */
export class FakeLlmEngine implements LlmEngine {
  readonly name = 'fake-llm';

  constructor(
    private readonly firstTokenMs: number,
    private readonly deltaIntervalMs: number,
    private readonly log: EngineDelayLog,
  ) {}

  stream(request: LlmRequest): AsyncIterable<LlmEvent> {
    // The clock starts when the request is made, not when the caller first pulls from the stream.
    return this.answer(request, performance.now());
  }

  private async *answer(request: LlmRequest, startedAt: number): AsyncGenerator<LlmEvent> {
    const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
    const question = lastUser ? questionNumberIn(lastUser.content) : undefined;
    let dueAt = startedAt + this.firstTokenMs;
    for (const [index, delta] of ANSWER_DELTAS.entries()) {
      await waitUntil(dueAt, request.signal);
      if (request.signal?.aborted) return;
      if (index === 0 && question !== undefined) this.log.llmFirstToken(request.callId, question, performance.now() - startedAt);
      yield { type: 'text', delta };
      dueAt = Math.max(dueAt, performance.now()) + this.deltaIntervalMs;
    }
    const totalMs = performance.now() - startedAt;
    yield { type: 'done', finishReason: 'stop', usage: null, timings: { totalMs } };
  }
}
