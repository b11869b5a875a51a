import { writeWav } from '@switchboard/audio';
import { FakeOpenAiServer } from './fake-openai-server';

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, ...extra });

function post(url: string, body: string | FormData, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: typeof body === 'string' ? { 'content-type': 'application/json', ...headers } : headers });
}

function wavForm(samples: Int16Array, fields: Record<string, string> = { model: 'whisper-1' }): FormData {
  const form = new FormData();
  form.append('file', new Blob([writeWav({ sampleRate: 16_000, samples })], { type: 'audio/wav' }), 'a.wav');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

/** SSE `data:` payloads of a body. */
const dataLines = (text: string) => text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));

describe('FakeOpenAiServer', () => {
  let server: FakeOpenAiServer;

  beforeEach(async () => {
    server = await FakeOpenAiServer.start();
  });

  afterEach(async () => {
    await server.close();
  });

  it('listens on 127.0.0.1 with a random port and reports base URLs with and without /v1', () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.baseUrl).toBe(`${server.origin}/v1`);
  });

  it('streams a scripted chat reply as OpenAI-shaped SSE, with usage only when asked for', async () => {
    server.chat = { text: ['Hi', ' there'], toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}', argumentPieces: 2 }], usage: { promptTokens: 3, completionTokens: 4, cachedTokens: 1 } };
    const response = await post(`${server.baseUrl}/chat/completions`, chatBody({ stream_options: { include_usage: true } }));
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const data = dataLines(await response.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((line) => JSON.parse(line));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content).filter(Boolean)).toEqual(['Hi', ' there']);
    const argumentPieces = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []).map((call: any) => call.function.arguments);
    expect(argumentPieces).toEqual(['', '{"a"', ':1}']);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 1 } } });

    const withoutUsage = dataLines(await (await post(`${server.baseUrl}/chat/completions`, chatBody())).text());
    expect(withoutUsage.some((line) => line.includes('"usage"'))).toBe(false);
  });

  it('checks requests like a real server: 400 for non-streaming chat, non-pcm speech, a broken upload; 404 elsewhere', async () => {
    expect((await post(`${server.baseUrl}/chat/completions`, chatBody({ stream: false }))).status).toBe(400);
    expect((await post(`${server.baseUrl}/audio/speech`, JSON.stringify({ model: 'm', input: 'x', voice: 'v', response_format: 'mp3' }))).status).toBe(400);
    const notWav = new FormData();
    notWav.append('file', new Blob([new Uint8Array([1, 2, 3, 4])]), 'a.wav');
    notWav.append('model', 'whisper-1');
    const rejected = await post(`${server.baseUrl}/audio/transcriptions`, notWav);
    expect(rejected.status).toBe(400);
    expect(await rejected.text()).toContain('invalid audio file');
    expect((await post(`${server.origin}/v2/whatever`, '{}')).status).toBe(404);
  });

  it('decodes and records the uploaded WAV and form fields of a transcription', async () => {
    server.transcription = { text: 'scripted words', language: 'en' };
    const samples = Int16Array.from({ length: 1600 }, (_, i) => i * 3 - 2000);
    const response = await post(`${server.baseUrl}/audio/transcriptions`, wavForm(samples, { model: 'whisper-1', language: 'en' }), { authorization: 'Bearer k' });
    expect(await response.json()).toEqual({ text: 'scripted words', language: 'en' });
    const [recorded] = server.requestsTo('transcriptions');
    expect(recorded!.form).toEqual({ model: 'whisper-1', language: 'en' });
    expect(recorded!.headers.authorization).toBe('Bearer k');
    expect(recorded!.wav!.samples).toEqual(samples);
  });

  it('streams speech PCM in the scripted uneven chunk sizes', async () => {
    const pcm = Int16Array.from({ length: 100 }, (_, i) => i - 50);
    server.speech = { pcm, chunkBytes: [3, 50], chunkDelayMs: 5 };
    const response = await post(`${server.baseUrl}/audio/speech`, JSON.stringify({ model: 'm', input: 'x', voice: 'v', response_format: 'pcm' }));
    const sizes: number[] = [];
    const received: number[] = [];
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      sizes.push(chunk.length);
      received.push(...chunk);
    }
    expect(sizes.slice(0, 4)).toEqual([3, 50, 3, 50]);
    expect(new Int16Array(Uint8Array.from(received).buffer)).toEqual(pcm);
  });

  it('applies queued failures in order, then answers normally', async () => {
    server.failNext('chat', { kind: 'status', status: 500 }, 2).failNext('chat', { kind: 'status', status: 429, retryAfter: '7' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await post(`${server.baseUrl}/chat/completions`, chatBody());
      statuses.push(response.status);
      if (response.status === 429) expect(response.headers.get('retry-after')).toBe('7');
      await response.text();
    }
    expect(statuses).toEqual([500, 500, 429, 200]);
    expect(server.requestsTo('chat').map((request) => request.failure?.kind)).toEqual(['status', 'status', 'status', undefined]);
  });

  it('requires the API key when configured, echoing the wrong one back like some real servers', async () => {
    const guarded = await FakeOpenAiServer.start({ apiKey: 'right-key' });
    try {
      const response = await post(`${guarded.baseUrl}/chat/completions`, chatBody(), { authorization: 'Bearer wrong-key' });
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('wrong-key');
      expect((await post(`${guarded.baseUrl}/chat/completions`, chatBody(), { authorization: 'Bearer right-key' })).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('resets the connection before the headers, or after some chunks', async () => {
    server.failNext('chat', { kind: 'reset' });
    await expect(post(`${server.baseUrl}/chat/completions`, chatBody())).rejects.toThrow('fetch failed');
    server.failNext('chat', { kind: 'reset', afterChunks: 1 });
    const response = await post(`${server.baseUrl}/chat/completions`, chatBody());
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it('stalls with the connection open, and delays headers', async () => {
    server.failNext('chat', { kind: 'stall', afterChunks: 1 });
    const response = await post(`${server.baseUrl}/chat/completions`, chatBody());
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');
    const next = await Promise.race([reader.read().then(() => 'data'), new Promise((resolve) => setTimeout(() => resolve('silence'), 200))]);
    expect(next).toBe('silence');
    await reader.cancel();

    server.failNext('chat', { kind: 'delay_headers', delayMs: 150 });
    const startedAt = performance.now();
    const delayed = await post(`${server.baseUrl}/chat/completions`, chatBody());
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(140);
    expect(delayed.status).toBe(200);
    await delayed.text();
  });

  it('sends a broken SSE chunk, a cut-off JSON body, and JSON instead of audio when malformed', async () => {
    server.failNext('chat', { kind: 'malformed' }).failNext('transcriptions', { kind: 'malformed' }).failNext('speech', { kind: 'malformed' });
    const chat = dataLines(await (await post(`${server.baseUrl}/chat/completions`, chatBody())).text());
    expect(() => JSON.parse(chat.at(-1)!)).toThrow();
    const transcription = await (await post(`${server.baseUrl}/audio/transcriptions`, wavForm(new Int16Array(160)))).text();
    expect(() => JSON.parse(transcription)).toThrow();
    const speech = await post(`${server.baseUrl}/audio/speech`, JSON.stringify({ model: 'm', input: 'x', voice: 'v', response_format: 'pcm' }));
    expect(speech.headers.get('content-type')).toBe('application/json');
    await speech.text();
  });
});
