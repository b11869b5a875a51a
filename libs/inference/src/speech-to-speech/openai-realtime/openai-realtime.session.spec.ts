import { DEFAULT_FAKE_USAGE, FakeRealtimeServer, recognisableMulawChunks } from '@switchboard/testing';
import { EngineError } from '../../contracts/engine-error';
import { CircuitBreakerRegistry } from '../../remote/circuit-breaker-registry';
import type {
  SpeechToSpeechConnectOptions,
  SpeechToSpeechEventName,
  SpeechToSpeechSession,
  SpeechToSpeechSessionEvents,
} from '../speech-to-speech-engine';
import { OpenAiRealtimeEngine } from './openai-realtime.engine';
import type { OpenAiRealtimeEngineOptions } from './openai-realtime.options';

const API_KEY = 'sk-test-session-0123456789';

type Payload<E extends SpeechToSpeechEventName> = Parameters<SpeechToSpeechSessionEvents[E]>[0];

/** Records every session event and waits for particular ones. */
class SessionEvents {
  readonly all: { name: SpeechToSpeechEventName; payload: unknown }[] = [];
  private waiters: (() => void)[] = [];

  constructor(session: SpeechToSpeechSession) {
    const names: SpeechToSpeechEventName[] = ['audio', 'speech_started', 'speech_stopped', 'transcript', 'tool_call', 'response_done', 'error', 'closed'];
    for (const name of names) {
      session.on(name, (payload: unknown) => {
        this.all.push({ name, payload });
        for (const waiter of this.waiters) waiter();
      });
    }
  }

  of<E extends SpeechToSpeechEventName>(name: E): Payload<E>[] {
    return this.all.filter((event) => event.name === name).map((event) => event.payload as Payload<E>);
  }

  next<E extends SpeechToSpeechEventName>(name: E, predicate: (payload: Payload<E>) => boolean = () => true, timeoutMs = 3000): Promise<Payload<E>> {
    const start = this.all.length;
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.all.slice(start).find((event) => event.name === name && predicate(event.payload as Payload<E>));
        if (found === undefined) return;
        cleanup();
        resolve(found.payload as Payload<E>);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no "${name}" session event within ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((waiter) => waiter !== check);
      };
      this.waiters.push(check);
    });
  }
}

describe('OpenAiRealtimeSession against the local fake Realtime server', () => {
  let server: FakeRealtimeServer;
  let session: SpeechToSpeechSession | undefined;

  const connectOptions: SpeechToSpeechConnectOptions = {
    callId: 'call-1',
    instructions: 'You are a helpful receptionist.',
    turnDetection: { type: 'server_vad', threshold: 0.6, prefixPaddingMs: 300, silenceDurationMs: 500 },
  };

  const engineFor = (overrides: Partial<OpenAiRealtimeEngineOptions> = {}): OpenAiRealtimeEngine =>
    new OpenAiRealtimeEngine({
      apiKey: API_KEY,
      model: 'gpt-realtime',
      baseUrl: server.baseUrl,
      circuitBreakers: new CircuitBreakerRegistry(),
      ...overrides,
    });

  beforeEach(async () => {
    server = new FakeRealtimeServer({ apiKey: API_KEY });
    await server.start();
  });

  afterEach(async () => {
    await session?.close();
    session = undefined;
    await server.stop();
  });

  it.each(['ga', 'beta'] as const)('passes mu-law through byte-identical both ways (%s protocol)', async (protocol) => {
    const reply = recognisableMulawChunks(12, 160, 7);
    session = await engineFor({ protocol }).connect(connectOptions);
    // After 200 ms of caller audio the fake plays a whole turn: speech start/stop, then the reply.
    server.lastConnection.autoTurn = { afterAudioMs: 200, response: { audioChunks: reply } };
    const events = new SessionEvents(session);
    const done = events.next('response_done');

    // 200 ms of caller audio in 20 ms Twilio frames, every byte value represented.
    const frames = Array.from({ length: 10 }, (_, frame) => Uint8Array.from({ length: 160 }, (_, i) => (frame * 160 + i) % 256));
    for (const frame of frames) expect(session.sendAudio(frame)).toBe(true);
    await done;

    const connection = server.lastConnection;
    expect(connection.protocol).toBe(protocol);
    expect(connection.appendedAudio.equals(Buffer.concat(frames))).toBe(true);
    const audio = events.of('audio');
    expect(audio).toHaveLength(reply.length);
    expect(Buffer.concat(audio.map((event) => event.audio)).equals(Buffer.concat(reply))).toBe(true);
    expect(new Set(audio.map((event) => event.itemId)).size).toBe(1);
  });

  it('configures the session: mu-law formats, turn detection, tools, voice, instructions (GA)', async () => {
    session = await engineFor({ inputTranscriptionModel: 'whisper-1' }).connect({
      ...connectOptions,
      voice: 'marin',
      tools: [{ name: 'lookup_order', description: 'Find an order', parametersSchema: { type: 'object', properties: { orderId: { type: 'string' } } } }],
    });
    const [upgrade] = server.upgrades;
    expect(upgrade).toMatchObject({ model: 'gpt-realtime', authorized: true, betaHeader: undefined, status: 101 });
    const update = server.lastConnection.receivedOfType('session.update')[0]?.session;
    expect(update).toEqual({
      type: 'realtime',
      model: 'gpt-realtime',
      output_modalities: ['audio'],
      instructions: 'You are a helpful receptionist.',
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: { model: 'whisper-1' },
          turn_detection: { type: 'server_vad', create_response: true, interrupt_response: false, threshold: 0.6, prefix_padding_ms: 300, silence_duration_ms: 500 },
        },
        output: { format: { type: 'audio/pcmu' }, voice: 'marin' },
      },
      tools: [{ type: 'function', name: 'lookup_order', description: 'Find an order', parameters: { type: 'object', properties: { orderId: { type: 'string' } } } }],
      tool_choice: 'auto',
    });
    expect(session.connectTimings.attempts).toBe(1);
    expect(session.connectTimings.totalMs).toBeGreaterThan(0);
  });

  it('configures semantic VAD and g711_ulaw on the beta protocol, with the beta header', async () => {
    session = await engineFor({ protocol: 'beta', inputTranscriptionModel: null }).connect({
      ...connectOptions,
      turnDetection: { type: 'semantic_vad', eagerness: 'low' },
    });
    expect(server.upgrades[0]?.betaHeader).toBe('realtime=v1');
    const update = server.lastConnection.receivedOfType('session.update')[0]?.session;
    expect(update).toMatchObject({
      input_audio_format: 'g711_ulaw',
      output_audio_format: 'g711_ulaw',
      input_audio_transcription: null,
      turn_detection: { type: 'semantic_vad', eagerness: 'low', create_response: true, interrupt_response: false },
      tools: [],
    });
  });

  it.each(['ga', 'beta'] as const)('round-trips a tool call: tool_call, then function_call_output and response.create (%s)', async (protocol) => {
    session = await engineFor({ protocol }).connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    const toolCall = events.next('tool_call');
    void connection.playTurn({ functionCall: { name: 'lookup_order', arguments: '{"orderId":"A-17"}', callId: 'call_abc' } }, 'where is my order');
    expect(await toolCall).toMatchObject({ callId: 'call_abc', name: 'lookup_order', arguments: '{"orderId":"A-17"}' });

    const answer = recognisableMulawChunks(3, 160, 9);
    connection.responseQueue.push({ audioChunks: answer, transcript: 'It ships today.' });
    const followUp = events.next('response_done', (event) => event.status === 'completed' && events.of('audio').length === 3);
    session.submitToolResult('call_abc', '{"status":"shipped"}');
    await followUp;

    expect(connection.toolOutputs).toEqual([{ callId: 'call_abc', output: '{"status":"shipped"}' }]);
    const types = connection.received.map((event) => event.type).filter((type) => type !== 'input_audio_buffer.append');
    expect(types.slice(-2)).toEqual(['conversation.item.create', 'response.create']);
    expect(Buffer.concat(events.of('audio').map((event) => event.audio)).equals(Buffer.concat(answer))).toBe(true);
    expect(events.of('transcript')).toContainEqual(expect.objectContaining({ role: 'user', text: 'where is my order', final: true }));
    expect(events.of('transcript')).toContainEqual(expect.objectContaining({ role: 'assistant', text: 'It ships today.', final: true }));
  });

  it('captures usage per response and in the running total, with first-audio timings', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    const chunks = recognisableMulawChunks(4);
    const first = events.next('response_done');
    await connection.playTurn({ audioChunks: chunks, chunkIntervalMs: 5 });
    const done = await first;
    expect(done.status).toBe('completed');
    expect(done.usage).toEqual({
      inputTextTokens: 80,
      inputAudioTokens: 40,
      inputCachedTokens: 64,
      inputCachedTextTokens: 48,
      inputCachedAudioTokens: 16,
      outputTextTokens: 20,
      outputAudioTokens: 50,
      totalTokens: 190,
    });
    // Timed from the caller's end of speech: the first byte precedes the end of a 4-chunk paced response.
    expect(done.timings.firstResultMs).toBeGreaterThanOrEqual(0);
    expect(done.timings.totalMs).toBeGreaterThanOrEqual(done.timings.firstResultMs ?? Infinity);
    expect(done.timings.totalMs).toBeGreaterThanOrEqual(10);

    const second = events.next('response_done');
    await connection.playTurn({ audioChunks: chunks, usage: { ...DEFAULT_FAKE_USAGE, total_tokens: 10 } });
    await second;
    expect(session.usageTotals.totalTokens).toBe(200);
    expect(session.usageTotals.outputAudioTokens).toBe(100);
  });

  it('barge-in: cancels and truncates with the given audio_end_ms, and drops the late deltas', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    const spoken = recognisableMulawChunks(40, 160, 3);
    const late = recognisableMulawChunks(3, 160, 200);
    const live = session;
    // The runtime's barge-in, as the conversation runtime will do it on speech_started.
    let truncatedItem: string | undefined;
    live.on('speech_started', () => {
      const lastAudio = events.of('audio').at(-1);
      if (lastAudio === undefined) return;
      expect(live.cancelResponse()).toBe(true);
      truncatedItem = lastAudio.itemId;
      live.truncate(lastAudio.itemId, 420);
    });

    const outcome = connection.playTurn({ audioChunks: spoken, chunkIntervalMs: 10, lateChunksAfterCancel: late, transcript: 'one two three four five' });
    await events.next('audio', () => events.of('audio').length >= 3);
    connection.speechStarted();
    const done = await events.next('response_done');
    const played = await outcome;

    expect(played.status).toBe('cancelled');
    expect(played.lateChunksSent).toBe(3);
    expect(played.chunksSent).toBeLessThan(spoken.length);
    expect(done.status).toBe('cancelled');
    expect(done.usage?.totalTokens).toBe(190);
    await connection.waitForEvent('conversation.item.truncate');
    expect(connection.receivedOfType('response.cancel')).toEqual([{ type: 'response.cancel', response_id: played.responseId }]);
    expect(connection.truncations).toEqual([{ itemId: played.itemId, contentIndex: 0, audioEndMs: 420 }]);
    expect(truncatedItem).toBe(played.itemId);
    // Only audio sent before the cancel reached the runtime; none of the late bytes did.
    const received = Buffer.concat(events.of('audio').map((event) => event.audio));
    expect(received.equals(Buffer.concat(spoken.slice(0, events.of('audio').length)))).toBe(true);
    for (const chunk of late) expect(received.includes(Buffer.from(chunk))).toBe(false);
    expect(events.of('transcript').filter((event) => event.role === 'assistant' && event.final)).toEqual([
      expect.objectContaining({ interrupted: true }),
    ]);
    // Nothing in progress any more: a second cancel sends nothing.
    expect(session.cancelResponse()).toBe(false);
    expect(connection.receivedOfType('response.cancel')).toHaveLength(1);
    expect(events.of('error')).toEqual([]);
  });

  it('cancels a response it requested before the server announced it, and drops that response entirely', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    connection.responseQueue.push({ audioChunks: recognisableMulawChunks(5), chunkIntervalMs: 5 });
    session.createResponse({ instructions: 'Greet the caller.' });
    expect(session.cancelResponse()).toBe(true);
    const done = await events.next('response_done');
    expect(done.status).toBe('cancelled');
    expect(events.of('audio')).toEqual([]);
    expect(connection.receivedOfType('response.create')[0]).toEqual({ type: 'response.create', response: { instructions: 'Greet the caller.' } });
  });

  it('delivers events the server sends right after acknowledging the configuration', async () => {
    const connected = server.nextConnection();
    const connecting = engineFor().connect(connectOptions);
    const connection = await connected;
    // Sent back to back with session.updated, so they can share a frame batch with it.
    void connection.waitForEvent('session.update').then(() => connection.speechStarted('item_early', 0));
    session = await connecting;
    const events = new SessionEvents(session);
    expect(await events.next('speech_started')).toEqual({ itemId: 'item_early', audioMs: 0 });
  });

  it('reports a malformed message as an error event and keeps the session working', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    const error = events.next('error');
    connection.sendRaw('{"type": "response.output_audio.delta", "delta": ');
    const reported = await error;
    expect(reported).toBeInstanceOf(EngineError);
    expect(reported).toMatchObject({ code: 'malformed_response', retryable: false });

    const fieldless = events.next('error', (e) => e.message.includes('lacks required fields'));
    connection.sendEvent({ type: 'response.output_audio.delta', delta: 42 });
    await fieldless;

    const done = events.next('response_done');
    await connection.playTurn({ audioChunks: recognisableMulawChunks(2) });
    await done;
    expect(session.isOpen).toBe(true);
    expect(events.of('audio')).toHaveLength(2);
  });

  it('maps server error events to EngineErrors and ignores the benign cancel race', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    connection.sendError({ type: 'invalid_request_error', code: 'response_cancel_not_active', message: 'no active response' });
    const serverError = events.next('error');
    connection.sendError({ type: 'server_error', message: 'The server had an error' });
    expect(await serverError).toMatchObject({ code: 'unavailable', retryable: true });
    const rateLimited = events.next('error');
    connection.sendError({ type: 'invalid_request_error', code: 'rate_limit_exceeded', message: 'slow down' });
    expect(await rateLimited).toMatchObject({ code: 'rate_limited', retryable: true });
    expect(events.of('error')).toHaveLength(2);
    expect(session.isOpen).toBe(true);
  });

  it('reports a server close as a retryable error, then closed', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const closed = events.next('closed');
    server.lastConnection.close(1011, 'internal error');
    const event = await closed;
    const [error] = events.of('error');
    expect(error).toMatchObject({ code: 'unavailable', retryable: true });
    expect(error?.message).toContain('1011');
    expect(event).toEqual({ byClient: false, error });
    expect(session.isOpen).toBe(false);
    expect(session.sendAudio(new Uint8Array(160))).toBe(false);
  });

  it('close() closes the socket cleanly and stops sending; a second close is a no-op', async () => {
    session = await engineFor().connect(connectOptions);
    const events = new SessionEvents(session);
    const connection = server.lastConnection;
    await session.close();
    await session.close();
    expect(await connection.closed).toEqual({ code: 1000, reason: 'call ended' });
    expect(events.of('closed')).toEqual([{ byClient: true }]);
    expect(events.of('error')).toEqual([]);
    expect(session.isOpen).toBe(false);
    expect(session.sendAudio(new Uint8Array(160))).toBe(false);
    expect(() => session?.submitToolResult('call_1', '{}')).toThrow(expect.objectContaining({ code: 'unavailable' }));
    expect(() => session?.truncate('item_1', 100)).toThrow(EngineError);
    expect(session.cancelResponse()).toBe(false);
  });

  it('rejects bad arguments with clear bad_request errors', async () => {
    session = await engineFor().connect(connectOptions);
    expect(() => session?.truncate('', 10)).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => session?.truncate('item', Number.NaN)).toThrow(/audioEndMs/);
    expect(() => session?.submitToolResult('call', { ok: true } as unknown as string)).toThrow(/output must be a string/);
    expect(() => session?.sendAudio('abc' as unknown as Uint8Array)).toThrow(/Uint8Array/);
    expect(session.isOpen).toBe(true);
  });
});
