import { EngineError } from '../contracts';
import type { RemoteAttempt } from '../remote/remote-attempt';
import { RemoteHttpClient, type RemoteEndpointOptions, type RemoteResponse } from '../remote/remote-http-client';
import type { RemoteOperation } from '../remote/remote-operation';
import { buildChatRequestBody, type ChatRequestDefaults } from './chat-request-body';
import { ChatStreamAssembler, type ChatStreamOutput } from './chat-stream-assembler';
import type { LlmEngine, LlmEvent, LlmRequest } from './llm-engine';

export interface OpenAiChatLlmOptions extends RemoteEndpointOptions {
  /** Engine name in errors, logs and the circuit-breaker key; default 'openai-chat'. */
  name?: string;
  temperature?: number;
  maxTokens?: number;
  maxTokensField?: ChatRequestDefaults['maxTokensField'];
  /** Default true; turn off for a server that rejects `stream_options`. */
  includeUsage?: boolean;
  extraBody?: Record<string, unknown>;
}

interface OpenedStream {
  chunks: AsyncIterator<Uint8Array>;
  assembler: ChatStreamAssembler;
  firstOutputs: ChatStreamOutput[];
}

/**
 * Streaming OpenAI-compatible Chat Completions (OpenAI, vLLM, Ollama, Groq, ...) with tools.
 * `POST {baseUrl}/v1/chat/completions` with `stream: true`; text deltas are yielded as they
 * arrive, tool calls once complete, then `done` with the finish reason, token usage and timings.
 * A request that fails before its first output is retried (see RemoteHttpClient); once anything
 * was yielded it never is, because the caller may already have spoken those words.
 */
export class OpenAiChatLlm implements LlmEngine {
  readonly name: string;
  private readonly client: RemoteHttpClient;
  private readonly defaults: ChatRequestDefaults;

  constructor(options: OpenAiChatLlmOptions) {
    this.name = options.name ?? 'openai-chat';
    this.client = new RemoteHttpClient(this.name, options);
    this.defaults = {
      model: options.model,
      temperature: options.temperature,
      maxTokens: options.maxTokens,
      maxTokensField: options.maxTokensField ?? 'max_tokens',
      includeUsage: options.includeUsage ?? true,
      extraBody: options.extraBody,
    };
  }

  stream(request: LlmRequest): AsyncIterable<LlmEvent> {
    return this.streamReply(request);
  }

  private async *streamReply(request: LlmRequest): AsyncGenerator<LlmEvent> {
    const body = buildChatRequestBody(this.name, request, this.defaults);
    const url = this.client.url('/v1/chat/completions');
    const operation = this.client.startOperation(request.signal);
    let attempt: RemoteAttempt | undefined;
    try {
      const opened = await this.client.run(operation, async (current) => {
        const response = await current.postJson(url, body);
        return this.readFirstOutputs(current, response);
      });
      attempt = opened.attempt;
      const { chunks, assembler, firstOutputs } = opened.value;
      yield* this.toEvents(firstOutputs, operation);
      while (!assembler.finished) {
        const next = await chunks.next();
        yield* this.toEvents(next.done === true ? assembler.end() : assembler.push(next.value), operation);
      }
    } catch (error) {
      if (attempt === undefined) throw error;
      // After the first output: no retry; the caller gets the failure and the breaker counts it.
      const failure = attempt.failure(error);
      attempt.reportLateFailure(failure);
      throw failure;
    } finally {
      attempt?.dispose();
      operation.dispose();
    }
  }

  /** Reads until the stream produced something for the caller (or finished): the retry boundary. */
  private async readFirstOutputs(attempt: RemoteAttempt, response: RemoteResponse): Promise<OpenedStream> {
    const contentType = response.headers.get('content-type') ?? '';
    if (!contentType.includes('text/event-stream')) {
      const preview = (await attempt.text(response, 200).catch(() => '')).slice(0, 120);
      throw new EngineError(this.name, 'malformed_response', `${this.name}: expected an event stream, got "${contentType}": ${preview}`, false);
    }
    const chunks = attempt.chunks(response)[Symbol.asyncIterator]();
    const assembler = new ChatStreamAssembler(this.name);
    for (;;) {
      const next = await chunks.next();
      const outputs = next.done === true ? assembler.end() : assembler.push(next.value);
      if (outputs.length > 0) {
        attempt.firstOutput();
        return { chunks, assembler, firstOutputs: outputs };
      }
    }
  }

  private *toEvents(outputs: ChatStreamOutput[], operation: RemoteOperation): Generator<LlmEvent> {
    for (const output of outputs) {
      if (output.type === 'finished') {
        yield { type: 'done', finishReason: output.finishReason, usage: output.usage, timings: operation.timings() };
      } else {
        yield output;
      }
    }
  }
}
