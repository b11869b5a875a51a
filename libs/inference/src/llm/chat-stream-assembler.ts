import { EngineError } from '../contracts';
import { SseDecoder, type SseEvent } from '../remote/sse-decoder';
import type { LlmUsage } from './llm-engine';

/** What one streamed Chat Completion decodes to; the engine adds timings to `finished`. */
export type ChatStreamOutput =
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'finished'; finishReason: string; usage: LlmUsage | null };

interface PendingToolCall {
  id: string;
  name: string;
  /** Argument text arrives in pieces; joined once when the call is complete. */
  argumentParts: string[];
}

interface ChunkToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/**
 * Turns the bytes of a streamed OpenAI-compatible Chat Completion (`stream: true`,
 * `stream_options.include_usage`) into text deltas, complete tool calls and a final
 * finish reason + usage. Tool calls arrive as indexed deltas whose argument text is split across
 * chunks, several calls interleaved; they are emitted whole, in index order, when the choice
 * finishes. Works with OpenAI, vLLM, Groq and Ollama (whose older versions leave out `index`).
 */
export class ChatStreamAssembler {
  private readonly sse = new SseDecoder();
  private readonly toolCalls = new Map<number, PendingToolCall>();
  private lastToolCallIndex = -1;
  private finishReason: string | undefined;
  private usage: LlmUsage | null = null;
  private toolCallsFlushed = false;
  private done = false;

  constructor(private readonly engine: string) {}

  get finished(): boolean {
    return this.done;
  }

  push(bytes: Uint8Array): ChatStreamOutput[] {
    const outputs: ChatStreamOutput[] = [];
    for (const event of this.sse.push(bytes)) this.handleEvent(event, outputs);
    return outputs;
  }

  /** The body ended. Without `[DONE]` the reply still counts when a finish reason was seen. */
  end(): ChatStreamOutput[] {
    const outputs: ChatStreamOutput[] = [];
    for (const event of this.sse.end()) this.handleEvent(event, outputs);
    if (this.done) return outputs;
    if (this.finishReason === undefined) {
      throw new EngineError(this.engine, 'unavailable', `${this.engine}: the stream ended before the reply finished (no finish_reason, no [DONE])`, true);
    }
    this.finish(outputs);
    return outputs;
  }

  private handleEvent(event: SseEvent, outputs: ChatStreamOutput[]): void {
    if (this.done) return;
    const data = event.data.trim();
    if (data === '[DONE]') {
      this.finish(outputs);
      return;
    }
    if (data === '') return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw this.malformed(`stream chunk is not JSON: ${data.slice(0, 120)}`);
    }
    if (typeof chunk !== 'object' || chunk === null) throw this.malformed(`stream chunk is not an object: ${data.slice(0, 120)}`);
    const body = chunk as { error?: unknown; usage?: unknown; choices?: unknown };
    if (body.error !== undefined && body.error !== null) throw streamedError(this.engine, body.error);
    if (body.usage !== undefined && body.usage !== null) this.usage = readUsage(body.usage);
    if (body.choices === undefined || body.choices === null) return;
    if (!Array.isArray(body.choices)) throw this.malformed('"choices" is not an array');
    for (const choice of body.choices as Array<{ index?: number; delta?: unknown; finish_reason?: unknown }>) {
      // One reply per request (n = 1); a server that sends more choices has them ignored.
      if ((choice.index ?? 0) !== 0) continue;
      this.handleDelta(choice.delta, outputs);
      if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
        this.finishReason = choice.finish_reason;
        this.flushToolCalls(outputs);
      }
    }
  }

  private handleDelta(delta: unknown, outputs: ChatStreamOutput[]): void {
    if (typeof delta !== 'object' || delta === null) return;
    const { content, tool_calls: toolCalls } = delta as { content?: unknown; tool_calls?: unknown };
    if (typeof content === 'string' && content !== '') outputs.push({ type: 'text', delta: content });
    if (toolCalls === undefined || toolCalls === null) return;
    if (!Array.isArray(toolCalls)) throw this.malformed('"tool_calls" is not an array');
    toolCalls.forEach((toolCall: ChunkToolCallDelta, position) => this.addToolCallDelta(toolCall, position));
  }

  private addToolCallDelta(delta: ChunkToolCallDelta, position: number): void {
    const index = this.toolCallIndex(delta, position);
    let pending = this.toolCalls.get(index);
    if (pending === undefined) {
      pending = { id: '', name: '', argumentParts: [] };
      this.toolCalls.set(index, pending);
    }
    this.lastToolCallIndex = index;
    if (typeof delta.id === 'string' && delta.id !== '') pending.id = delta.id;
    const name = delta.function?.name;
    if (typeof name === 'string' && name !== '') pending.name = pending.name === '' ? name : pending.name;
    const argumentPart = delta.function?.arguments;
    if (typeof argumentPart === 'string') pending.argumentParts.push(argumentPart);
  }

  /** `index` when the server sends it; otherwise a new id opens a new call, else it continues the last. */
  private toolCallIndex(delta: ChunkToolCallDelta, position: number): number {
    if (typeof delta.index === 'number' && Number.isInteger(delta.index) && delta.index >= 0) return delta.index;
    if (typeof delta.id === 'string' && delta.id !== '') {
      for (const [index, pending] of this.toolCalls) if (pending.id === delta.id) return index;
      return Math.max(this.lastToolCallIndex + 1, position);
    }
    return Math.max(this.lastToolCallIndex, 0);
  }

  private flushToolCalls(outputs: ChatStreamOutput[]): void {
    if (this.toolCallsFlushed) return;
    this.toolCallsFlushed = true;
    const indexes = [...this.toolCalls.keys()].sort((a, b) => a - b);
    for (const index of indexes) {
      const pending = this.toolCalls.get(index) as PendingToolCall;
      if (pending.name === '') throw this.malformed(`tool call ${index} has no function name`);
      const argumentText = pending.argumentParts.join('');
      outputs.push({
        type: 'tool_call',
        id: pending.id === '' ? `call_${index}` : pending.id,
        name: pending.name,
        // A function without parameters arrives as '' from some servers; '{}' is what it means.
        arguments: argumentText.trim() === '' ? '{}' : argumentText,
      });
    }
  }

  private finish(outputs: ChatStreamOutput[]): void {
    this.flushToolCalls(outputs);
    const finishReason = this.finishReason ?? (this.toolCalls.size > 0 ? 'tool_calls' : 'stop');
    outputs.push({ type: 'finished', finishReason, usage: this.usage });
    this.done = true;
  }

  private malformed(detail: string): EngineError {
    return new EngineError(this.engine, 'malformed_response', `${this.engine}: malformed chat stream: ${detail}`, false);
  }
}

function readUsage(usage: unknown): LlmUsage | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const { prompt_tokens: prompt, completion_tokens: completion, prompt_tokens_details: details } = usage as {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  };
  const cached = details?.cached_tokens;
  return {
    inputTokens: typeof prompt === 'number' ? prompt : 0,
    cachedInputTokens: typeof cached === 'number' ? cached : 0,
    outputTokens: typeof completion === 'number' ? completion : 0,
  };
}

/** An `{"error": ...}` chunk in the middle of a stream (vLLM, OpenAI on overload). */
function streamedError(engine: string, error: unknown): EngineError {
  const { message, code } = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as { message?: unknown; code?: unknown };
  const text = `${engine}: server error in stream: ${typeof message === 'string' ? message : JSON.stringify(error)}`;
  const status = typeof code === 'number' ? code : Number.NaN;
  if (status === 429 || code === 'rate_limit_exceeded') return new EngineError(engine, 'rate_limited', text, true);
  if (status >= 400 && status < 500) return new EngineError(engine, 'bad_request', text, false, { httpStatus: status });
  return new EngineError(engine, 'unavailable', text, true);
}
