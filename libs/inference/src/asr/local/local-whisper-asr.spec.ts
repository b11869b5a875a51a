import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { EngineError } from '../../contracts';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../../runtime';
import { writeWhisperStandIn } from '@switchboard/testing';
import type { AsrPartial } from '../asr-engine';
import { LocalWhisperAsr } from './local-whisper-asr';
import type { Transcription } from './whisper-transcriber';

jest.setTimeout(20_000);

const FIXTURES = join(__dirname, '../../../../../test/fixtures/speech');
const speech = (name: string): Int16Array => readWav(readFileSync(join(FIXTURES, `${name}.16k.wav`))).samples;
const quietLogger = { log: () => undefined, warn: () => undefined };

describe('LocalWhisperAsr on the stand-in Whisper (real runtime, real onnxruntime sessions)', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;
  let asr: LocalWhisperAsr;
  const transcripts = new Map<string, Promise<Transcription>>();
  /** Each fixture is transcribed once and shared between tests (they run in order). */
  const transcriptOf = (name: string): Promise<Transcription> => {
    if (!transcripts.has(name)) transcripts.set(name, asr.transcribe(speech(name)));
    return transcripts.get(name)!;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'whisper-asr-'));
    await writeWhisperStandIn(join(dir, 'both'), { decoders: ['merged', 'no-cache'] });
    await cp(join(dir, 'both'), join(dir, 'plain'), { recursive: true });
    await unlink(join(dir, 'plain', 'onnx', 'decoder_model_merged.onnx'));
    await cp(join(dir, 'both'), join(dir, 'merged'), { recursive: true });
    await unlink(join(dir, 'merged', 'onnx', 'decoder_model.onnx'));
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: quietLogger });
    asr = await LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'merged') });
  });

  afterAll(async () => {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('transcribes a fixture end to end (features, encoder, decoder loop, tokenizer) to the same non-empty text every time', async () => {
    const first = await transcriptOf('goodbye');
    const second = await asr.transcribe(speech('goodbye'));
    expect(first.text.length).toBeGreaterThan(0);
    expect(first.text).toMatch(/^[A-Za-z ,.?']+$/);
    expect(second.tokens).toEqual(first.tokens);
    expect(second.text).toBe(first.text);
    // One decoder step per token plus the step that chose end-of-text.
    expect(first.decoderSteps).toBe(first.tokens.length + 1);
    expect(first.runMs).toBeGreaterThan(0);
  });

  it('gives different audio different text', async () => {
    const texts = await Promise.all(['goodbye', 'hours', 'transfer'].map(async (name) => (await transcriptOf(name)).text));
    const silence = (await asr.transcribe(new Int16Array(16000))).text;
    expect(new Set([...texts, silence]).size).toBe(4);
  });

  it('prefers the merged KV-cache decoder, and the plain decoder gives exactly the same tokens', async () => {
    const plain = await LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'plain') });
    expect(asr.decoderLayout).toBe('merged');
    expect(plain.decoderLayout).toBe('no-cache');
    expect((await plain.transcribe(speech('hours'))).tokens).toEqual((await transcriptOf('hours')).tokens);
  });

  it('transcribes audio longer than one 30 s window window by window and joins the texts', async () => {
    const long = new Int16Array(34 * 16000);
    const goodbye = speech('goodbye');
    long.set(goodbye, 0);
    long.set(speech('hours'), 30 * 16000 - 8000);
    const whole = await asr.transcribe(long);
    const first = await asr.transcribe(long.subarray(0, 30 * 16000));
    const rest = await asr.transcribe(long.subarray(30 * 16000));
    expect(whole.text).toBe(`${first.text} ${rest.text}`);
    expect(whole.tokens).toEqual([...first.tokens, ...rest.tokens]);
  });

  it('a session buffers pushed audio and finish() returns the same transcript, with timings', async () => {
    const audio = speech('transfer');
    const session = asr.createSession({ callId: 'call-1' });
    for (let offset = 0; offset < audio.length; offset += 320) session.pushAudio(audio.subarray(offset, offset + 320));
    const result = await session.finish();
    expect(result.text).toBe((await transcriptOf('transfer')).text);
    expect(result.language).toBeUndefined();
    expect(result.audioSeconds).toBeCloseTo(audio.length / 16000, 6);
    expect(result.timings.totalMs).toBeGreaterThan(0);
    expect(result.timings.runMs).toBeGreaterThan(0);
    expect(result.timings.firstResultMs).toBeUndefined();
    expect(asr.supportsPartials).toBe(false);
  });

  it('with partials on, re-decodes the growing buffer while audio arrives', async () => {
    const withPartials = await LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'merged'), name: 'whisper-partials', partialIntervalMs: 1000 });
    expect(withPartials.supportsPartials).toBe(true);
    const audio = speech('goodbye');
    const session = withPartials.createSession({ callId: 'call-2', language: 'en' });
    const partials: AsrPartial[] = [];
    const firstPartial = new Promise<void>((resolve) => session.onPartial(() => resolve()));
    session.onPartial((partial) => partials.push(partial));
    for (let offset = 0; offset < audio.length; offset += 3200) session.pushAudio(audio.subarray(offset, offset + 3200));
    // finish() aborts a partial still decoding, so the caller's turn waits for the re-decode that
    // the first second of audio started rather than for any stretch of time.
    await firstPartial;
    const result = await session.finish();
    expect(partials.length).toBeGreaterThan(0);
    for (const partial of partials) {
      expect(partial.stable).toBe(false);
      expect(partial.text.length).toBeGreaterThan(0);
    }
    expect(result.text).toBe((await transcriptOf('goodbye')).text);
    expect(result.language).toBe('en');
    expect(result.timings.firstResultMs).toBeGreaterThan(0);
  });

  it('cancel() makes finish() reject as cancelled; misuse gets clear errors', async () => {
    const cancelled = asr.createSession({ callId: 'call-3' });
    cancelled.pushAudio(speech('goodbye'));
    cancelled.cancel();
    await expect(cancelled.finish()).rejects.toMatchObject({ code: 'cancelled', retryable: false });
    expect(() => cancelled.pushAudio(new Int16Array(10))).toThrow(/cancelled/);

    const empty = asr.createSession({ callId: 'call-4' });
    await expect(empty.finish()).resolves.toMatchObject({ text: '', audioSeconds: 0 });
    expect(() => empty.pushAudio(new Int16Array(10))).toThrow(EngineError);
    await expect(empty.finish()).rejects.toMatchObject({ code: 'bad_request' });

    expect(() => asr.createSession({ callId: 'call-5', language: 'xx' })).toThrow(/language 'xx'/);
  });

  it('fails to load with a non-retryable model_missing error naming what is missing', async () => {
    const broken = join(dir, 'broken');
    await cp(join(dir, 'merged'), broken, { recursive: true });
    await unlink(join(broken, 'onnx', 'decoder_model_merged.onnx'));
    await expect(LocalWhisperAsr.load({ runtime, modelDir: broken })).rejects.toMatchObject({ code: 'model_missing', retryable: false });
    await expect(LocalWhisperAsr.load({ runtime, modelDir: broken })).rejects.toThrow(/no decoder_model_merged\.onnx or decoder_model\.onnx/);
    await expect(LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'nowhere') })).rejects.toThrow(/no encoder_model\.onnx/);
  });

  it('refuses a decoder whose inputs do not match config.json at load', async () => {
    const mismatched = join(dir, 'mismatched-layers');
    await cp(join(dir, 'merged'), mismatched, { recursive: true });
    const config = JSON.parse(await readFile(join(mismatched, 'config.json'), 'utf8'));
    await writeFile(join(mismatched, 'config.json'), JSON.stringify({ ...config, decoder_layers: 3 }));
    await expect(LocalWhisperAsr.load({ runtime, modelDir: mismatched, name: 'whisper-mismatched' })).rejects.toThrow(
      /decoder inputs do not match config.json \(decoder_layers=3, merged\): missing \[past_key_values\.2\.decoder\.key/,
    );
  });

  it('reports a failed model run as a non-retryable EngineError from this engine', async () => {
    // Wrong head count in config.json: the first decoder step's cache tensors have the wrong
    // shape and the runtime refuses the run.
    const wrongHeads = join(dir, 'wrong-heads');
    await cp(join(dir, 'merged'), wrongHeads, { recursive: true });
    const config = JSON.parse(await readFile(join(wrongHeads, 'config.json'), 'utf8'));
    await writeFile(join(wrongHeads, 'config.json'), JSON.stringify({ ...config, decoder_attention_heads: 4 }));
    const engine = await LocalWhisperAsr.load({ runtime, modelDir: wrongHeads, name: 'whisper-wrong-heads' });
    const session = engine.createSession({ callId: 'call-6' });
    session.pushAudio(speech('goodbye'));
    const failure = await session.finish().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure).toMatchObject({ engine: 'whisper-wrong-heads', code: 'bad_request', retryable: false });
    expect((failure as EngineError).message).toMatch(/past_key_values\.0\.decoder\.key/);
  });
});
