import { FakeOpenAiServer } from '@switchboard/testing';
import { EngineError } from '../contracts';
import { CircuitBreakerRegistry } from '../remote/circuit-breaker-registry';
import type { RemotePolicyOverrides } from '../remote/remote-policy-options';
import type { LlmEvent, LlmRequest } from './llm-engine';
import { OpenAiChatLlm, type OpenAiChatLlmOptions } from './openai-chat-llm';

const API_KEY = 'sk-test-0123456789abcdef';
const FAST_POLICY: RemotePolicyOverrides = {
  timeouts: { connectTimeoutMs: 1_000, firstByteTimeoutMs: 1_000, idleTimeoutMs: 1_000, totalTimeoutMs: 5_000 },
  retry: { maxRetries: 2, initialDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 1_000 },
  circuitBreaker: { consecutiveFailures: 10, halfOpenAfterMs: 1_000 },
};

interface Collected {
  events: LlmEvent[];
  /** Milliseconds from the start of iteration to each event. */
  atMs: number[];
  error?: EngineError;
}

async function collect(stream: AsyncIterable<LlmEvent>, stopAfter = Number.POSITIVE_INFINITY): Promise<Collected> {
  const collected: Collected = { events: [], atMs: [] };
  const startedAt = performance.now();
  try {
    for await (const event of stream) {
      collected.events.push(event);
      collected.atMs.push(performance.now() - startedAt);
      if (collected.events.length >= stopAfter) break;
    }
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    collected.error = error;
  }
  return collected;
}

const request = (overrides: Partial<LlmRequest> = {}): LlmRequest => ({
  callId: 'call-1',
  messages: [
    { role: 'system', content: 'You are a helpful agent.' },
    { role: 'user', content: 'Where is my order?' },
  ],
  ...overrides,
});

const textOf = (events: LlmEvent[]) => events.map((event) => (event.type === 'text' ? event.delta : '')).join('');
const doneOf = (events: LlmEvent[]) => events.find((event): event is Extract<LlmEvent, { type: 'done' }> => event.type === 'done');

/** The breaker settles an attempt's outcome a few promise jobs after the caller saw it. */
const settleBreaker = () => new Promise((resolve) => setImmediate(resolve));

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('OpenAiChatLlm against a real local OpenAI-compatible server', () => {
  let server: FakeOpenAiServer;
  let logs: string[];

  beforeEach(async () => {
    server = await FakeOpenAiServer.start({ apiKey: API_KEY });
    logs = [];
  });

  afterEach(async () => {
    await server.close();
  });

  const engine = (overrides: Partial<OpenAiChatLlmOptions> = {}) =>
    new OpenAiChatLlm({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      model: 'gpt-test',
      policy: FAST_POLICY,
      circuitBreakers: new CircuitBreakerRegistry(),
      logger: { warn: (message) => logs.push(message) },
      ...overrides,
    });

  describe('happy path', () => {
    it('streams text deltas, then done with the finish reason, token usage and timings', async () => {
      server.chat = { text: ['Your order ', 'ships ', 'tomorrow.'], usage: { promptTokens: 50, completionTokens: 6, cachedTokens: 32 } };
      const { events, error } = await collect(engine().stream(request()));
      expect(error).toBeUndefined();
      expect(events.slice(0, 3)).toEqual([
        { type: 'text', delta: 'Your order ' },
        { type: 'text', delta: 'ships ' },
        { type: 'text', delta: 'tomorrow.' },
      ]);
      const done = doneOf(events);
      expect(events.at(-1)).toBe(done);
      expect(done).toMatchObject({ finishReason: 'stop', usage: { inputTokens: 50, cachedInputTokens: 32, outputTokens: 6 } });
      expect(done!.timings.attempts).toBe(1);
      expect(done!.timings.firstResultMs).toBeGreaterThan(0);
      expect(done!.timings.firstResultMs).toBeLessThanOrEqual(done!.timings.totalMs);
    });

    it('sends the OpenAI wire request: bearer key, model, messages, tools, stream with usage, sampling options', async () => {
      await collect(
        engine({ temperature: 0.2, maxTokens: 300, extraBody: { parallel_tool_calls: true } }).stream(
          request({
            tools: [{ name: 'lookup_order', description: 'Find an order', parameters: { type: 'object', properties: { id: { type: 'string' } } } }],
            maxTokens: 120,
          }),
        ),
      );
      const [sent] = server.requestsTo('chat');
      expect(sent!.path).toBe('/v1/chat/completions');
      expect(sent!.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(sent!.headers['content-type']).toBe('application/json');
      expect(sent!.json).toEqual({
        model: 'gpt-test',
        messages: request().messages,
        stream: true,
        stream_options: { include_usage: true },
        temperature: 0.2,
        max_tokens: 120,
        parallel_tool_calls: true,
        tools: [{ type: 'function', function: { name: 'lookup_order', description: 'Find an order', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }],
      });
    });

    it('accepts a base URL without /v1 and can send max_completion_tokens instead of max_tokens', async () => {
      const { error } = await collect(engine({ baseUrl: server.origin, maxTokensField: 'max_completion_tokens' }).stream(request({ maxTokens: 50 })));
      expect(error).toBeUndefined();
      const [sent] = server.requestsTo('chat');
      expect(sent!.path).toBe('/v1/chat/completions');
      expect(sent!.json).toMatchObject({ max_completion_tokens: 50 });
      expect(sent!.json).not.toHaveProperty('max_tokens');
    });

    it('assembles parallel tool calls whose arguments arrive in interleaved pieces', async () => {
      server.chat = {
        text: ['Checking.'],
        toolCalls: [
          { id: 'call_1', name: 'lookup_order', arguments: '{"orderId":"A-17"}', argumentPieces: 5 },
          { id: 'call_2', name: 'get_eta', arguments: '{"zip":"10115","express":false}', argumentPieces: 4 },
        ],
        interleaveToolCalls: true,
        usage: { promptTokens: 80, completionTokens: 30 },
      };
      const { events } = await collect(engine().stream(request()));
      expect(events.filter((event) => event.type === 'tool_call')).toEqual([
        { type: 'tool_call', id: 'call_1', name: 'lookup_order', arguments: '{"orderId":"A-17"}' },
        { type: 'tool_call', id: 'call_2', name: 'get_eta', arguments: '{"zip":"10115","express":false}' },
      ]);
      expect(JSON.parse((events[2] as { arguments: string }).arguments)).toEqual({ zip: '10115', express: false });
      expect(doneOf(events)).toMatchObject({ finishReason: 'tool_calls', usage: { inputTokens: 80, cachedInputTokens: 0, outputTokens: 30 } });
    });

    it('yields each delta as it arrives, not when the reply is complete', async () => {
      server.chat = { text: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 60, keepAliveComments: true };
      const { events, atMs } = await collect(engine().stream(request()));
      const done = doneOf(events)!;
      // 10 delayed writes (comments included): the first token is out ~0.5 s before the end.
      expect(done.timings.totalMs - done.timings.firstResultMs!).toBeGreaterThan(300);
      expect(atMs.at(-1)! - atMs[0]!).toBeGreaterThan(300);
      expect(textOf(events)).toBe('abcde');
    });

    it('refuses a request without messages before sending anything', async () => {
      const { error } = await collect(engine().stream(request({ messages: [] })));
      expect(error).toMatchObject({ code: 'bad_request', retryable: false });
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('failures before the first token are retried, with backoff', () => {
    it('retries 500s and succeeds on the third attempt', async () => {
      server.failNext('chat', { kind: 'status', status: 500 }, 2);
      const { events, error } = await collect(engine().stream(request()));
      expect(error).toBeUndefined();
      expect(server.requestsTo('chat')).toHaveLength(3);
      expect(doneOf(events)!.timings.attempts).toBe(3);
      expect(logs).toHaveLength(2);
      expect(logs[0]).toMatch(/HTTP 500.*retry 1\/2/);
    });

    it('gives up after maxRetries with a retryable unavailable error', async () => {
      server.failNext('chat', { kind: 'status', status: 503 }, 3);
      const { events, error } = await collect(engine().stream(request()));
      expect(events).toEqual([]);
      expect(error).toMatchObject({ code: 'unavailable', retryable: true, httpStatus: 503 });
      expect(server.requestsTo('chat')).toHaveLength(3);
    });

    it('honours Retry-After on 429 before retrying', async () => {
      server.failNext('chat', { kind: 'status', status: 429, retryAfter: '0.3', message: 'Rate limit reached' });
      const { events, error } = await collect(engine().stream(request()));
      expect(error).toBeUndefined();
      const [first, second] = server.requestsTo('chat');
      expect(second!.receivedAtMs - first!.receivedAtMs).toBeGreaterThanOrEqual(290);
      expect(doneOf(events)!.timings.attempts).toBe(2);
    });

    it('does not wait out a Retry-After longer than maxRetryAfterMs: the caller gets rate_limited with the delay', async () => {
      server.failNext('chat', { kind: 'status', status: 429, retryAfter: '30' });
      const { error } = await collect(engine().stream(request()));
      expect(error).toMatchObject({ code: 'rate_limited', retryable: true, retryAfterMs: 30_000 });
      expect(server.requestsTo('chat')).toHaveLength(1);
    });

    it('retries a connection reset before the headers', async () => {
      server.failNext('chat', { kind: 'reset' });
      const { events, error } = await collect(engine().stream(request()));
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe('Hello, how can I help?');
      expect(server.requestsTo('chat')).toHaveLength(2);
    });

    it('retries when the headers do not come within connectTimeoutMs', async () => {
      server.failNext('chat', { kind: 'delay_headers', delayMs: 1_000 });
      const { events, error } = await collect(engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, connectTimeoutMs: 150 } } }).stream(request()));
      expect(error).toBeUndefined();
      expect(doneOf(events)!.timings.attempts).toBe(2);
      expect(logs[0]).toMatch(/no response headers within 150 ms/);
    });

    it('retries a stream that stalls before its first token (first-byte timeout)', async () => {
      // The first chunk only carries the assistant role: nothing the caller could have heard.
      server.failNext('chat', { kind: 'stall', afterChunks: 1 });
      const { events, error } = await collect(engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, firstByteTimeoutMs: 200 } } }).stream(request()));
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe('Hello, how can I help?');
      expect(logs[0]).toMatch(/no first output within 200 ms/);
    });

    it('reports a timeout when every attempt is too slow', async () => {
      server.failNext('chat', { kind: 'delay_headers', delayMs: 2_000 }, 3);
      const { error } = await collect(engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, connectTimeoutMs: 100 } } }).stream(request()));
      expect(error).toMatchObject({ code: 'timeout', retryable: true });
      expect(server.requestsTo('chat')).toHaveLength(3);
    });

    it('stops at the total deadline even while retries remain', async () => {
      server.failNext('chat', { kind: 'delay_headers', delayMs: 2_000 }, 5);
      const startedAt = performance.now();
      const { error } = await collect(
        engine({ policy: { ...FAST_POLICY, timeouts: { connectTimeoutMs: 1_500, totalTimeoutMs: 300 }, retry: { ...FAST_POLICY.retry, maxRetries: 5 } } }).stream(request()),
      );
      expect(error).toMatchObject({ code: 'timeout' });
      expect(error!.message).toMatch(/did not complete within 300 ms/);
      expect(performance.now() - startedAt).toBeLessThan(1_000);
      expect(server.requestsTo('chat')).toHaveLength(1);
    });
  });

  describe('failures that are not retried', () => {
    it('401: unauthorized, one request, and the key never appears in the error or the logs', async () => {
      const { error } = await collect(engine({ apiKey: 'sk-wrong-key-9876543210' }).stream(request()));
      expect(error).toMatchObject({ code: 'unauthorized', retryable: false, httpStatus: 401 });
      expect(error!.message).not.toContain('sk-wrong-key-9876543210');
      expect(error!.message).toContain('Incorrect API key provided: [redacted]');
      expect(server.requestsTo('chat')).toHaveLength(1);
      expect(logs).toEqual([]);
    });

    it('400: bad_request with the server message, one request', async () => {
      server.failNext('chat', { kind: 'status', status: 400, message: "'messages' must contain the word 'json'" });
      const { error } = await collect(engine().stream(request()));
      expect(error).toMatchObject({ code: 'bad_request', retryable: false });
      expect(error!.message).toContain("'messages' must contain the word 'json'");
      expect(server.requestsTo('chat')).toHaveLength(1);
    });

    it('a broken SSE chunk: malformed_response, one request', async () => {
      server.failNext('chat', { kind: 'malformed' });
      const { error } = await collect(engine().stream(request()));
      expect(error).toMatchObject({ code: 'malformed_response', retryable: false });
      expect(server.requestsTo('chat')).toHaveLength(1);
    });

    it('a stall after the first token: idle timeout to the caller, never a replay of what was said', async () => {
      server.chat = { text: ['Your order ', 'ships ', 'tomorrow.'] };
      // Role chunk + first text chunk go out, then silence.
      server.failNext('chat', { kind: 'stall', afterChunks: 2 });
      const { events, error } = await collect(engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, idleTimeoutMs: 200 } } }).stream(request()));
      expect(events).toEqual([{ type: 'text', delta: 'Your order ' }]);
      expect(error).toMatchObject({ code: 'timeout', retryable: true });
      expect(error!.message).toMatch(/stalled: no data within 200 ms/);
      expect(server.requestsTo('chat')).toHaveLength(1);
    });

    it('a connection reset after the first token: unavailable to the caller, no retry', async () => {
      server.chat = { text: ['One ', 'two ', 'three.'] };
      server.failNext('chat', { kind: 'reset', afterChunks: 3 });
      const { events, error } = await collect(engine().stream(request()));
      expect(textOf(events)).toBe('One two ');
      expect(error).toMatchObject({ code: 'unavailable', retryable: true });
      expect(server.requestsTo('chat')).toHaveLength(1);
    });
  });

  describe('cancellation', () => {
    it('aborting mid-stream ends the iteration with cancelled and closes the connection', async () => {
      server.chat = { text: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 50 };
      const controller = new AbortController();
      const events: LlmEvent[] = [];
      let error: unknown;
      try {
        for await (const event of engine().stream(request({ signal: controller.signal }))) {
          events.push(event);
          if (events.length === 2) controller.abort();
        }
      } catch (caught) {
        error = caught;
      }
      expect(events).toHaveLength(2);
      expect(error).toMatchObject({ code: 'cancelled', retryable: false });
      await waitFor(() => server.responsesInFlight === 0);
    });

    it('an already-aborted signal sends nothing', async () => {
      const controller = new AbortController();
      controller.abort();
      const { error } = await collect(engine().stream(request({ signal: controller.signal })));
      expect(error).toMatchObject({ code: 'cancelled' });
      expect(server.requests).toHaveLength(0);
    });

    it('aborting during a retry backoff answers at once', async () => {
      server.failNext('chat', { kind: 'status', status: 429, retryAfter: '0.8' });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const startedAt = performance.now();
      const { error } = await collect(engine().stream(request({ signal: controller.signal })));
      expect(error).toMatchObject({ code: 'cancelled' });
      expect(performance.now() - startedAt).toBeLessThan(500);
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(server.requestsTo('chat')).toHaveLength(1);
    });

    it('breaking out of the loop releases the connection', async () => {
      server.chat = { text: ['a', 'b', 'c', 'd'], chunkDelayMs: 50 };
      const { events } = await collect(engine().stream(request()), 1);
      expect(events).toHaveLength(1);
      await waitFor(() => server.responsesInFlight === 0);
    });
  });

  describe('circuit breaker', () => {
    it('opens after N consecutive failures, fails fast while open, and closes after a successful trial', async () => {
      const circuitBreakers = new CircuitBreakerRegistry();
      const llm = engine({ circuitBreakers, policy: { ...FAST_POLICY, retry: { maxRetries: 0 }, circuitBreaker: { consecutiveFailures: 3, halfOpenAfterMs: 300 } } });
      server.failNext('chat', { kind: 'status', status: 502 }, 3);
      for (let i = 0; i < 3; i++) expect((await collect(llm.stream(request()))).error).toMatchObject({ code: 'unavailable' });
      expect(circuitBreakers.snapshot()).toEqual([{ key: `openai-chat ${server.baseUrl}`, state: 'open' }]);

      const refused = await collect(llm.stream(request()));
      expect(refused.error).toMatchObject({ code: 'circuit_open', retryable: true });
      expect(refused.error!.retryAfterMs).toBeGreaterThan(0);
      expect(refused.error!.retryAfterMs).toBeLessThanOrEqual(300);
      expect(server.requestsTo('chat')).toHaveLength(3);

      await new Promise((resolve) => setTimeout(resolve, 350));
      const trial = await collect(llm.stream(request()));
      expect(trial.error).toBeUndefined();
      expect(textOf(trial.events)).toBe('Hello, how can I help?');
      await settleBreaker();
      expect(circuitBreakers.snapshot()[0]!.state).toBe('closed');
    });

    it('a failed trial re-opens it', async () => {
      const circuitBreakers = new CircuitBreakerRegistry();
      const llm = engine({ circuitBreakers, policy: { ...FAST_POLICY, retry: { maxRetries: 0 }, circuitBreaker: { consecutiveFailures: 2, halfOpenAfterMs: 200 } } });
      server.failNext('chat', { kind: 'status', status: 500 }, 3);
      await collect(llm.stream(request()));
      await collect(llm.stream(request()));
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await collect(llm.stream(request()))).error).toMatchObject({ code: 'unavailable' });
      expect((await collect(llm.stream(request()))).error).toMatchObject({ code: 'circuit_open' });
      expect(server.requestsTo('chat')).toHaveLength(3);
    });

    it('does not count client errors (401) against the endpoint', async () => {
      const circuitBreakers = new CircuitBreakerRegistry();
      const llm = engine({ apiKey: 'sk-bad-bad-bad', circuitBreakers, policy: { ...FAST_POLICY, circuitBreaker: { consecutiveFailures: 2 } } });
      for (let i = 0; i < 4; i++) expect((await collect(llm.stream(request()))).error).toMatchObject({ code: 'unauthorized' });
      expect(circuitBreakers.snapshot()[0]!.state).toBe('closed');
    });

    it('counts failures after the first token, which are never retried', async () => {
      const circuitBreakers = new CircuitBreakerRegistry();
      const llm = engine({ circuitBreakers, policy: { ...FAST_POLICY, circuitBreaker: { consecutiveFailures: 2, halfOpenAfterMs: 5_000 } } });
      server.failNext('chat', { kind: 'reset', afterChunks: 2 }, 2);
      for (let i = 0; i < 2; i++) {
        const { events, error } = await collect(llm.stream(request()));
        expect(events).toEqual([{ type: 'text', delta: 'Hello' }]);
        expect(error).toMatchObject({ code: 'unavailable' });
        await settleBreaker();
      }
      expect((await collect(llm.stream(request()))).error).toMatchObject({ code: 'circuit_open' });
      expect(server.requestsTo('chat')).toHaveLength(2);
    });
  });
});
