import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readWav } from '@switchboard/audio';
import { chatCompletionEvents, sseData } from './chat-completion-chunks';
import { delay, writeChunkedResponse } from './chunked-response-writer';
import { readRequestBody } from '../net/read-request-body';
import type {
  FakeChatReply,
  FakeEndpoint,
  FakeFailure,
  FakeSpeechReply,
  FakeTranscriptionReply,
  RecordedRequest,
  ReplyScript,
} from './fake-openai-types';

export interface FakeOpenAiServerOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get a 401. */
  apiKey?: string;
  /** Loopback address to listen on (default 127.0.0.1); tests of the outbound guard use another, e.g. 127.0.0.2. */
  host?: string;
  chat?: ReplyScript<RecordedRequest, FakeChatReply>;
  transcription?: ReplyScript<RecordedRequest, FakeTranscriptionReply>;
  speech?: ReplyScript<RecordedRequest, FakeSpeechReply>;
}

const ROUTES: Record<string, FakeEndpoint> = {
  '/v1/chat/completions': 'chat',
  '/v1/audio/transcriptions': 'transcriptions',
  '/v1/audio/speech': 'speech',
};

const DEFAULT_CHAT: FakeChatReply = { text: ['Hello', ', how can I help?'], usage: { promptTokens: 12, completionTokens: 7 } };
const DEFAULT_TRANSCRIPTION: FakeTranscriptionReply = { text: 'hello world' };

/**
 * A real OpenAI-compatible HTTP server on 127.0.0.1 (random port) for testing remote engines:
 * streamed Chat Completions, multipart transcriptions (the uploaded WAV is decoded and checked)
 * and streamed PCM speech, each scripted, with per-request failure modes queued by `failNext`.
 * Every request is recorded (headers, body, parsed form and audio) so tests assert what was sent.
 */
export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  chat: ReplyScript<RecordedRequest, FakeChatReply>;
  transcription: ReplyScript<RecordedRequest, FakeTranscriptionReply>;
  speech: ReplyScript<RecordedRequest, FakeSpeechReply>;
  private readonly failures: Record<FakeEndpoint, FakeFailure[]> = { chat: [], transcriptions: [], speech: [] };
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;

  private constructor(
    private readonly server: Server,
    private readonly options: FakeOpenAiServerOptions,
  ) {
    this.chat = options.chat ?? DEFAULT_CHAT;
    this.transcription = options.transcription ?? DEFAULT_TRANSCRIPTION;
    this.speech = options.speech ?? { pcm: new Int16Array(2400) };
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
    const server = createServer();
    const fake = new FakeOpenAiServer(server, options);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      fake.inFlight++;
      res.once('close', () => fake.inFlight--);
      fake.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendError(res, 500, `fake server error: ${error instanceof Error ? error.message : String(error)}`);
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, options.host ?? '127.0.0.1', () => resolve());
    });
    return fake;
  }

  /** `http://127.0.0.1:PORT` (engines append /v1/...). */
  get origin(): string {
    const { port, address } = this.server.address() as AddressInfo;
    return `http://${address}:${port}`;
  }

  /** `http://127.0.0.1:PORT/v1`, the form most providers document. */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  /** Connections currently open, idle keep-alive ones included. */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Responses still being written or held open (a cancelled stream must leave none behind). */
  get responsesInFlight(): number {
    return this.inFlight;
  }

  /** The next `times` requests to `endpoint` fail with `failure` (queued behind earlier ones). */
  failNext(endpoint: FakeEndpoint, failure: FakeFailure, times = 1): this {
    for (let i = 0; i < times; i++) this.failures[endpoint].push(failure);
    return this;
  }

  requestsTo(endpoint: FakeEndpoint): RecordedRequest[] {
    return this.requests.filter((request) => request.endpoint === endpoint);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readRequestBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const endpoint = req.method === 'POST' ? ROUTES[path] : undefined;
    const recorded: RecordedRequest = {
      endpoint: endpoint ?? 'unknown',
      method: req.method ?? '',
      path,
      headers: req.headers,
      bodyText: endpoint === 'transcriptions' ? '' : body.toString('utf8'),
      receivedAtMs: performance.now(),
    };
    this.requests.push(recorded);
    if (endpoint === undefined) return sendError(res, 404, `no route for ${req.method} ${path}`);
    const failure = this.failures[endpoint].shift();
    if (failure !== undefined) recorded.failure = failure;
    if (this.options.apiKey !== undefined && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      // Like several real servers, the message quotes the key it was given: clients must not log it.
      const given = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      return sendError(res, 401, `Incorrect API key provided: ${given}`, 'invalid_api_key');
    }
    // Parsed before any failure applies, so a test sees what every attempt sent.
    const upload = endpoint === 'transcriptions' ? await parseUpload(recorded, req, body) : undefined;
    if (endpoint !== 'transcriptions') parseJson(recorded);
    if (failure?.kind === 'status') return sendFailureStatus(res, failure);
    if (failure?.kind === 'delay_headers') await delay(failure.delayMs, res);
    if (res.destroyed) return;
    switch (endpoint) {
      case 'chat':
        return this.answerChat(recorded, res, failure);
      case 'transcriptions':
        return this.answerTranscription(recorded, upload ?? 'missing upload', res, failure);
      case 'speech':
        return this.answerSpeech(recorded, res, failure);
    }
  }

  private async answerChat(recorded: RecordedRequest, res: ServerResponse, failure: FakeFailure | undefined): Promise<void> {
    const request = parseJson(recorded);
    if (request === undefined) return sendError(res, 400, 'body is not JSON');
    if (typeof request.model !== 'string' || !Array.isArray(request.messages)) return sendError(res, 400, 'model and messages are required');
    if (request.stream !== true) return sendError(res, 400, 'this fake only streams (stream: true)');
    const reply = resolveScript(this.chat, recorded);
    const events = chatCompletionEvents(reply, { model: request.model, includeUsage: request.stream_options?.include_usage === true });
    if (failure?.kind === 'malformed') events.splice(1, events.length - 1, sseData('{"choices":[{"index":0,"delta":{"content":"Hel'));
    const chunks = reply.keepAliveComments ? events.flatMap((event) => [': keep-alive\n\n', event]) : events;
    await writeChunkedResponse(res, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
      chunks,
      chunkDelayMs: reply.chunkDelayMs,
      failure,
    });
  }

  private async answerTranscription(recorded: RecordedRequest, uploadProblem: string | true, res: ServerResponse, failure: FakeFailure | undefined): Promise<void> {
    if (uploadProblem !== true) return sendError(res, 400, uploadProblem);
    const reply = resolveScript(this.transcription, recorded);
    if (reply.delayMs) await delay(reply.delayMs, res);
    const json = JSON.stringify({ text: reply.text, ...(reply.language === undefined ? {} : { language: reply.language }) });
    const text = failure?.kind === 'malformed' ? json.slice(0, Math.max(1, json.length - 5)) : json;
    // Split in two writes so 'stall'/'reset' with afterChunks: 1 cut the body in half.
    const half = Math.ceil(text.length / 2);
    await writeChunkedResponse(res, { headers: { 'content-type': 'application/json' }, chunks: [text.slice(0, half), text.slice(half)], failure });
  }

  private async answerSpeech(recorded: RecordedRequest, res: ServerResponse, failure: FakeFailure | undefined): Promise<void> {
    const request = parseJson(recorded);
    if (request === undefined) return sendError(res, 400, 'body is not JSON');
    if (typeof request.model !== 'string' || typeof request.input !== 'string' || typeof request.voice !== 'string') {
      return sendError(res, 400, 'model, input and voice are required');
    }
    if (request.response_format !== 'pcm') return sendError(res, 400, `this fake only serves response_format "pcm", got "${String(request.response_format)}"`);
    if (failure?.kind === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"error": {"message": "not audio"');
      return;
    }
    const reply = resolveScript(this.speech, recorded);
    const bytes = new Uint8Array(reply.pcm.buffer, reply.pcm.byteOffset, reply.pcm.byteLength);
    const sizes = reply.chunkBytes ?? [1001, 4096, 333, 1];
    const chunks: Uint8Array[] = [];
    for (let offset = 0, i = 0; offset < bytes.length; i++) {
      const size = Math.max(1, sizes[i % sizes.length] ?? 1);
      chunks.push(bytes.slice(offset, offset + size));
      offset += size;
    }
    await writeChunkedResponse(res, { headers: { 'content-type': 'application/octet-stream' }, chunks, chunkDelayMs: reply.chunkDelayMs, failure });
  }
}

/** Records the multipart fields and decodes the WAV; true when usable, else what is wrong. */
async function parseUpload(recorded: RecordedRequest, req: IncomingMessage, body: Buffer): Promise<string | true> {
  const contentType = req.headers['content-type'] ?? '';
  if (!contentType.startsWith('multipart/form-data')) return `expected multipart/form-data, got "${contentType}"`;
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    return `unreadable multipart body: ${error instanceof Error ? error.message : String(error)}`;
  }
  recorded.form = {};
  for (const [name, value] of form) {
    if (typeof value === 'string') recorded.form[name] = value;
    else {
      recorded.fileName = value.name;
      recorded.fileType = value.type;
    }
  }
  const file = form.get('file');
  if (file === null || typeof file === 'string') return 'missing "file" upload';
  if (!recorded.form.model) return 'missing "model"';
  try {
    recorded.wav = readWav(new Uint8Array(await file.arrayBuffer()));
  } catch (error) {
    return `invalid audio file: ${error instanceof Error ? error.message : String(error)}`;
  }
  return true;
}

function resolveScript<Reply>(script: ReplyScript<RecordedRequest, Reply>, request: RecordedRequest): Reply {
  return typeof script === 'function' ? (script as (request: RecordedRequest) => Reply)(request) : script;
}

function parseJson(recorded: RecordedRequest): Record<string, any> | undefined {
  try {
    const json: unknown = JSON.parse(recorded.bodyText);
    recorded.json = json;
    return typeof json === 'object' && json !== null ? (json as Record<string, any>) : undefined;
  } catch {
    return undefined;
  }
}


function sendFailureStatus(res: ServerResponse, failure: Extract<FakeFailure, { kind: 'status' }>): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (failure.retryAfter !== undefined) headers['retry-after'] = failure.retryAfter;
  const body = failure.body ?? JSON.stringify({ error: { message: failure.message ?? `fake failure ${failure.status}`, type: 'fake_error', code: failure.status } });
  res.writeHead(failure.status, headers);
  res.end(body);
}

function sendError(res: ServerResponse, status: number, message: string, code: string | null = null): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: status === 401 ? 'invalid_request_error' : 'fake_error', code } }));
}
