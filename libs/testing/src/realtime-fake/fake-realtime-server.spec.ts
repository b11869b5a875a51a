import WebSocket from 'ws';
import { FakeRealtimeServer } from './fake-realtime-server';
import { recognisableMulawChunks } from './fake-realtime-script';

const KEY = 'sk-fake-test';

/** A raw protocol client, so the fake is checked independently of any engine. */
class RawClient {
  readonly events: Record<string, any>[] = [];
  readonly raw: string[] = [];
  private waiters: (() => void)[] = [];

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      this.raw.push(text);
      try {
        this.events.push(JSON.parse(text));
      } catch {
        // kept in raw only
      }
      for (const waiter of this.waiters) waiter();
    });
  }

  static async open(url: string, headers: Record<string, string>): Promise<RawClient> {
    const socket = new WebSocket(url, { headers });
    const client = new RawClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  send(event: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(event));
  }

  until(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((waiter) => waiter !== check);
        resolve();
      };
      const timer = setTimeout(() => reject(new Error('condition not met in time')), timeoutMs);
      this.waiters.push(check);
    });
  }

  ofType(type: string): Record<string, any>[] {
    return this.events.filter((event) => event.type === type);
  }
}

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(101);
      socket.close();
    });
    socket.on('error', (error) => {
      if (!error.message.includes('closed before the connection')) reject(error);
    });
  });
}

describe('FakeRealtimeServer', () => {
  let server: FakeRealtimeServer;
  const clients: RawClient[] = [];
  const url = (): string => `${server.baseUrl}?model=gpt-realtime`;
  const auth = { Authorization: `Bearer ${KEY}` };

  beforeEach(async () => {
    server = new FakeRealtimeServer({ apiKey: KEY });
    await server.start();
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.socket.terminate();
    await server.stop();
  });

  const connect = async (headers: Record<string, string> = auth): Promise<RawClient> => {
    const client = await RawClient.open(url(), headers);
    clients.push(client);
    await client.until(() => client.ofType('session.created').length === 1);
    return client;
  };

  it('refuses a missing or wrong key (401), a wrong path (404), a missing model (400), and scripted statuses', async () => {
    expect(await upgradeStatus(url(), {})).toBe(401);
    expect(await upgradeStatus(url(), { Authorization: 'Bearer nope' })).toBe(401);
    expect(await upgradeStatus(url().replace('/v1/realtime', '/v1/other'), auth)).toBe(404);
    expect(await upgradeStatus(server.baseUrl, auth)).toBe(400);
    server.rejectUpgrades(500, 1);
    expect(await upgradeStatus(url(), auth)).toBe(500);
    expect(await upgradeStatus(url(), auth)).toBe(101);
    expect(server.upgrades.map((upgrade) => upgrade.status)).toEqual([401, 401, 404, 400, 500, 101]);
    expect(server.upgrades[0]?.authorized).toBe(false);
  });

  it('acknowledges a GA session.update, refuses one without session.type, and records appended audio', async () => {
    const client = await connect();
    client.send({ type: 'session.update', session: { instructions: 'x' } });
    await client.until(() => client.ofType('error').length === 1);
    expect(client.ofType('error')[0]?.error.code).toBe('missing_required_parameter');

    client.send({ type: 'session.update', session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcmu' } } } } });
    await client.until(() => client.ofType('session.updated').length === 1);
    const audio = Buffer.from(recognisableMulawChunks(1, 800)[0] ?? []);
    client.send({ type: 'input_audio_buffer.append', audio: audio.toString('base64') });
    const connection = server.lastConnection;
    await connection.waitForEvent('input_audio_buffer.append');
    expect(connection.appendedAudio.equals(audio)).toBe(true);
    expect(connection.appendedAudioMs).toBe(100);
    expect(connection.protocol).toBe('ga');
  });

  it('plays a scripted response, stops it on response.cancel and sends the scripted late deltas', async () => {
    const client = await connect();
    const connection = server.lastConnection;
    const chunks = recognisableMulawChunks(30);
    const outcome = connection.respond({ audioChunks: chunks, chunkIntervalMs: 5, lateChunksAfterCancel: recognisableMulawChunks(2, 160, 50) });
    await client.until(() => client.ofType('response.output_audio.delta').length >= 2);
    client.send({ type: 'response.cancel' });
    const result = await outcome;
    await client.until(() => client.ofType('response.done').length === 1);
    expect(result.status).toBe('cancelled');
    expect(result.lateChunksSent).toBe(2);
    expect(result.chunksSent).toBeLessThan(30);
    expect(client.ofType('response.output_audio.delta')).toHaveLength(result.chunksSent + 2);
    expect(client.ofType('response.done')[0]?.response).toMatchObject({ id: result.responseId, status: 'cancelled' });

    client.send({ type: 'response.cancel' });
    await client.until(() => client.ofType('error').length === 1);
    expect(client.ofType('error')[0]?.error.code).toBe('response_cancel_not_active');
  });

  it('speaks beta event names to a client that sent the beta header', async () => {
    const client = await connect({ ...auth, 'OpenAI-Beta': 'realtime=v1' });
    const connection = server.lastConnection;
    expect(connection.protocol).toBe('beta');
    await connection.respond({ audioChunks: recognisableMulawChunks(1), transcript: 'hi', functionCall: { name: 'f', arguments: '{}' } });
    await client.until(() => client.ofType('response.done').length === 1);
    expect(client.ofType('response.audio.delta')).toHaveLength(1);
    expect(client.ofType('response.audio_transcript.done')[0]?.transcript).toBe('hi');
    expect(client.ofType('response.function_call_arguments.done')[0]?.name).toBeUndefined();
    expect(client.ofType('response.output_item.added')[0]?.item).toMatchObject({ type: 'function_call', name: 'f' });
  });

  it('records truncates and tool outputs, answers response.create from the queue, and fails on demand', async () => {
    const client = await connect();
    const connection = server.lastConnection;
    connection.responseQueue.push({ transcript: 'done' });
    client.send({ type: 'conversation.item.truncate', item_id: 'item_1', content_index: 0, audio_end_ms: 640 });
    client.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'call_1', output: '{"ok":true}' } });
    client.send({ type: 'response.create' });
    await client.until(() => client.ofType('response.done').length === 1);
    expect(connection.truncations).toEqual([{ itemId: 'item_1', contentIndex: 0, audioEndMs: 640 }]);
    expect(connection.toolOutputs).toEqual([{ callId: 'call_1', output: '{"ok":true}' }]);
    expect(client.ofType('response.output_audio_transcript.done')[0]?.transcript).toBe('done');

    connection.sendRaw('{oops');
    connection.sendError({ type: 'server_error', message: 'boom' });
    await client.until(() => client.raw.includes('{oops') && client.ofType('error').length === 1);
    connection.close(1011, 'bye');
    const closed = await new Promise<number>((resolve) => client.socket.once('close', (code) => resolve(code)));
    expect(closed).toBe(1011);
  });
});
