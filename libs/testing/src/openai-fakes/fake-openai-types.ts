import type { IncomingHttpHeaders } from 'node:http';
import type { WavAudio } from '@switchboard/audio';

export type FakeEndpoint = 'chat' | 'transcriptions' | 'speech';

export interface FakeToolCall {
  id: string;
  name: string;
  /** The complete JSON argument text; it is streamed in `argumentPieces` deltas. */
  arguments: string;
  /** How many deltas the argument text is split into; default 3. */
  argumentPieces?: number;
}

/** A scripted streamed Chat Completion. */
export interface FakeChatReply {
  /** Content deltas, one chunk each. */
  text?: string[];
  toolCalls?: FakeToolCall[];
  /** Send the argument deltas of several tool calls round-robin instead of one call after the other. */
  interleaveToolCalls?: boolean;
  /** Default 'tool_calls' when there are tool calls, else 'stop'. */
  finishReason?: string;
  /** Sent as the final usage chunk when the request asked for it (stream_options.include_usage). */
  usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number };
  /** Delay before each chunk; default 0 (chunks are still separate writes). */
  chunkDelayMs?: number;
  /** Put `: keep-alive` comment lines between chunks, as some proxies do. */
  keepAliveComments?: boolean;
  /** Leave out the final `data: [DONE]` (some servers end the body after the finish chunk). */
  omitDone?: boolean;
}

export interface FakeTranscriptionReply {
  text: string;
  language?: string;
  /** Time "spent transcribing" before the response headers. */
  delayMs?: number;
}

export interface FakeSpeechReply {
  /** The audio the endpoint streams, as 16-bit samples (sent little-endian). */
  pcm: Int16Array;
  /** Byte sizes of successive body chunks, cycled; default uneven and odd: [1001, 4096, 333, 1]. */
  chunkBytes?: number[];
  chunkDelayMs?: number;
}

/** How the next request(s) to an endpoint misbehave (see FakeOpenAiServer.failNext). */
export type FakeFailure =
  /** Waits before sending the response headers, then answers normally. */
  | { kind: 'delay_headers'; delayMs: number }
  /** An HTTP error status with an OpenAI-style error body. */
  | { kind: 'status'; status: number; message?: string; retryAfter?: string; body?: string }
  /** Sends `afterChunks` body chunks (0: headers only), then goes silent with the connection open. */
  | { kind: 'stall'; afterChunks: number }
  /** A 200 whose body is broken: cut-off JSON, a corrupt SSE chunk, JSON where audio was due. */
  | { kind: 'malformed' }
  /** Destroys the connection: before the headers, or after `afterChunks` body chunks. */
  | { kind: 'reset'; afterChunks?: number };

/** What a request carried, for tests to assert what the client sent. */
export interface RecordedRequest {
  endpoint: FakeEndpoint | 'unknown';
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  bodyText: string;
  /** Parsed JSON body (chat, speech). */
  json?: unknown;
  /** Text fields of a multipart body (transcriptions). */
  form?: Record<string, string>;
  /** The uploaded file, decoded (transcriptions). */
  wav?: WavAudio;
  fileName?: string;
  fileType?: string;
  /** The failure applied to this request, if any. */
  failure?: FakeFailure;
  receivedAtMs: number;
}

export type ReplyScript<Request, Reply> = Reply | ((request: Request) => Reply);
