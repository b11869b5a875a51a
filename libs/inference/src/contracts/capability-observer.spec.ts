import { EventEmitter } from 'node:events';
import type { AsrEngine } from '../asr/asr-engine';
import { observedAsr } from '../asr/observed-asr';
import type { LlmEngine, LlmEvent } from '../llm/llm-engine';
import { observedLlm } from '../llm/observed-llm';
import type { SpeechToSpeechEngine, SpeechToSpeechSession } from '../speech-to-speech/speech-to-speech-engine';
import { observedSpeechToSpeech } from '../speech-to-speech/observed-speech-to-speech';
import { observedTts } from '../tts/observed-tts';
import type { TtsEngine, TtsResult, TtsStream } from '../tts/tts-engine';
import type { CapabilityObserver } from './capability-observer';
import { EngineError } from './engine-error';

/** Writes every request and report call as one line, in order. */
function recordingObserver(): { observer: CapabilityObserver; seen: string[] } {
  const seen: string[] = [];
  const text = (value: unknown): string => (value instanceof Error ? value.message : JSON.stringify(value));
  const request = (kind: string) => (info: unknown) => {
    seen.push(`${kind} ${text(info)}`);
    return new Proxy({}, { get: (_target, method: string) => (...args: unknown[]) => seen.push(`${kind}.${method} ${args.map(text).join(' ')}`) });
  };
  const observer = { transcription: request('transcription'), completion: request('completion'), synthesis: request('synthesis'), speechToSpeech: request('speechToSpeech') };
  return { observer: observer as unknown as CapabilityObserver, seen };
}

const failure = (code: 'timeout' | 'cancelled'): EngineError => new EngineError('fake', code, `fake: ${code}`, code === 'timeout');

/** A synthesis of `chunks` 2-sample chunks at 4 Hz whose end the test decides. */
function fakeTts(chunks: number, ending: 'resolve' | 'reject' | 'throw'): TtsEngine {
  return {
    name: 'fake-tts',
    sampleRate: 4,
    synthesize: (text): TtsStream => {
      let settle!: { resolve: (result: TtsResult) => void; reject: (error: unknown) => void };
      const result = new Promise<TtsResult>((resolve, reject) => (settle = { resolve, reject }));
      return {
        sampleRate: 4,
        result,
        cancel: () => undefined,
        async *[Symbol.asyncIterator]() {
          for (let index = 0; index < chunks; index++) yield new Int16Array(2);
          if (ending === 'throw') throw failure('timeout');
          if (ending === 'reject') settle.reject(failure('timeout'));
          else settle.resolve({ characters: text.length, audioSeconds: chunks / 2, timings: { totalMs: 5 } });
        },
      };
    },
  };
}

async function drain<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('observed engines report each request once, through the one observer', () => {
  it('ASR: a transcription when the final transcript is asked for, then its result or its failure', async () => {
    const { observer, seen } = recordingObserver();
    let fail = false;
    const asr: AsrEngine = {
      name: 'fake-asr',
      sampleRate: 16_000,
      supportsPartials: false,
      createSession: () => ({
        pushAudio: () => undefined,
        onPartial: () => undefined,
        finish: async () => (fail ? Promise.reject(failure('timeout')) : { text: 'hi', audioSeconds: 1, timings: { totalMs: 3, firstResultMs: 1 } }),
        cancel: () => undefined,
      }),
    };
    const session = observedAsr(asr, observer).createSession({ callId: 'call-1' });
    session.pushAudio(new Int16Array(160));
    expect(seen).toEqual([]);
    await session.finish();
    fail = true;
    await expect(observedAsr(asr, observer).createSession({ callId: 'call-1' }).finish()).rejects.toThrow('fake: timeout');

    expect(seen).toEqual([
      'transcription {"callId":"call-1","engineName":"fake-asr"}',
      'transcription.transcribed {"text":"hi","audioSeconds":1,"timings":{"totalMs":3,"firstResultMs":1}}',
      'transcription {"callId":"call-1","engineName":"fake-asr"}',
      'transcription.failed fake: timeout',
    ]);
  });

  it('LLM: done before the consumer sees it (with the tool calls so far), then the end; a failure, then the end', async () => {
    const { observer, seen } = recordingObserver();
    const done: LlmEvent = { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 3, cachedInputTokens: 0, outputTokens: 2 }, timings: { totalMs: 4 } };
    const llm = (error?: EngineError): LlmEngine => ({
      name: 'fake-llm',
      async *stream() {
        yield { type: 'tool_call', id: 't1', name: 'lookup', arguments: '{}' };
        if (error) throw error;
        yield done;
      },
    });
    const controller = new AbortController();
    for await (const event of observedLlm(llm(), observer).stream({ callId: 'call-1', messages: [], signal: controller.signal })) {
      if (event.type === 'done') {
        seen.push('consumer saw done');
        controller.abort();
        break;
      }
    }
    await expect(drain(observedLlm(llm(failure('timeout')), observer).stream({ callId: 'call-1', messages: [] }))).rejects.toThrow('fake: timeout');

    expect(seen).toEqual([
      'completion {"callId":"call-1","engineName":"fake-llm"}',
      `completion.done ${JSON.stringify(done)} 1`,
      'consumer saw done',
      'completion.ended true',
      'completion {"callId":"call-1","engineName":"fake-llm"}',
      'completion.failed fake: timeout',
      'completion.ended false',
    ]);
  });

  it('TTS: one ending per synthesis, with the audio handed on so far', async () => {
    const { observer, seen } = recordingObserver();
    const finished = observedTts(fakeTts(2, 'resolve'), observer).synthesize('Hello', { callId: 'call-1' });
    await drain(finished);
    await finished.result;
    finished.cancel(); // a late cancel (barge-in after the last chunk) reports nothing more
    const thrown = observedTts(fakeTts(1, 'throw'), observer).synthesize('Hi', { callId: 'call-1' });
    await expect(drain(thrown)).rejects.toThrow('fake: timeout');
    const rejected = observedTts(fakeTts(1, 'reject'), observer).synthesize('Yo', { callId: 'call-1' });
    await drain(rejected);
    await expect(rejected.result).rejects.toThrow('fake: timeout');
    const cancelled = observedTts(fakeTts(3, 'resolve'), observer).synthesize('Stop', { callId: 'call-1' });
    for await (const _chunk of cancelled) cancelled.cancel();
    await settled();

    expect(seen).toEqual([
      'synthesis {"callId":"call-1","engineName":"fake-tts","text":"Hello"}',
      'synthesis.synthesized {"characters":5,"audioSeconds":1,"timings":{"totalMs":5}} {"bytes":8,"seconds":1}',
      'synthesis {"callId":"call-1","engineName":"fake-tts","text":"Hi"}',
      'synthesis.failed fake: timeout {"bytes":4,"seconds":0.5}',
      'synthesis {"callId":"call-1","engineName":"fake-tts","text":"Yo"}',
      'synthesis.failed fake: timeout {"bytes":4,"seconds":0.5}',
      'synthesis {"callId":"call-1","engineName":"fake-tts","text":"Stop"}',
      'synthesis.cancelled {"bytes":4,"seconds":0.5}',
    ]);
  });

  it('speech-to-speech: connecting, then the session it returns as is, its responses and its errors', async () => {
    const { observer, seen } = recordingObserver();
    const session = Object.assign(new EventEmitter(), { callId: 'call-1', connectTimings: { totalMs: 9 } }) as unknown as SpeechToSpeechSession & EventEmitter;
    let refuse = true;
    const engine: SpeechToSpeechEngine = {
      name: 'fake-realtime',
      inputFormat: 'mulaw8k',
      outputFormat: 'mulaw8k',
      connect: async () => (refuse ? Promise.reject(failure('timeout')) : session),
    };
    const options = { callId: 'call-1', instructions: 'Be brief.', turnDetection: { type: 'server_vad' } } as const;
    await expect(observedSpeechToSpeech(engine, observer).connect(options)).rejects.toThrow('fake: timeout');
    refuse = false;
    expect(await observedSpeechToSpeech(engine, observer).connect(options)).toBe(session);
    session.emit('response_done', { responseId: 'r1', status: 'completed', usage: undefined, timings: { totalMs: 2 } });
    session.emit('error', failure('timeout'));

    expect(seen).toEqual([
      'speechToSpeech {"callId":"call-1","engineName":"fake-realtime"}',
      'speechToSpeech.failed fake: timeout',
      'speechToSpeech {"callId":"call-1","engineName":"fake-realtime"}',
      expect.stringMatching(/^speechToSpeech\.connected /),
      'speechToSpeech.responseDone {"responseId":"r1","status":"completed","timings":{"totalMs":2}}',
      'speechToSpeech.sessionError fake: timeout',
    ]);
  });
});
