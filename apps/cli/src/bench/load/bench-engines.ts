import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sineTone } from '@switchboard/audio';
import { chatCompletionEvents, readRequestBody } from '@switchboard/testing';
import { ENGINE_DELAYS, LLM_DELTA_INTERVAL_MS, REPLY_TEXT, TTS_AUDIO_MS, TTS_CHUNK_BYTES, TTS_CHUNK_INTERVAL_MS, TTS_SAMPLE_RATE } from './load-settings';

/**
 * The load bench's OpenAI-compatible engines: transcription, streamed chat and streamed speech, each
 * after a fixed scripted delay, recording nothing (FakeOpenAiServer keeps every request, which a
 * run of thousands of turns cannot afford). Runs in a process of its own (bench-engines.main.ts) so
 * its timers are not late because of the callers or the server.
 */
export async function startBenchEngines(): Promise<{ server: Server; baseUrl: string }> {
  const tone = sineTone({ frequencyHz: 440, sampleRate: TTS_SAMPLE_RATE, durationMs: TTS_AUDIO_MS, amplitudeDbfs: -12 });
  const speech = Buffer.from(tone.buffer, tone.byteOffset, tone.byteLength);
  const server = createServer((req, res) => {
    void answer(req, res, speech).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://127.0.0.1:${port}/v1` };
}

async function answer(req: IncomingMessage, res: ServerResponse, speech: Buffer): Promise<void> {
  const body = await readRequestBody(req);
  switch (req.url) {
    case '/v1/audio/transcriptions':
      await sleep(ENGINE_DELAYS.asrMs);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: 'What time do you open tomorrow morning?' }));
      return;
    case '/v1/chat/completions': {
      const request = JSON.parse(body.toString('utf8')) as { model: string; stream_options?: { include_usage?: boolean } };
      const events = chatCompletionEvents({ text: REPLY_TEXT, usage: { promptTokens: 40, completionTokens: 8 } }, { model: request.model, includeUsage: request.stream_options?.include_usage === true });
      await sleep(ENGINE_DELAYS.llmFirstTokenMs);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      for (const [index, event] of events.entries()) {
        if (index > 0) await sleep(LLM_DELTA_INTERVAL_MS);
        if (res.destroyed) return;
        res.write(event);
      }
      res.end();
      return;
    }
    case '/v1/audio/speech': {
      await sleep(ENGINE_DELAYS.ttsFirstByteMs);
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      for (let offset = 0, i = 0; offset < speech.length; i++) {
        if (i > 0) await sleep(TTS_CHUNK_INTERVAL_MS);
        if (res.destroyed) return;
        const size = TTS_CHUNK_BYTES[i % TTS_CHUNK_BYTES.length] as number;
        res.write(speech.subarray(offset, offset + size));
        offset += size;
      }
      res.end();
      return;
    }
    default:
      res.writeHead(404).end();
  }
}


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
