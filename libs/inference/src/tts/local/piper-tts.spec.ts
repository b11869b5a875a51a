import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../../runtime';
import { writePiperStandIn } from '@switchboard/testing';
import type { TtsStream } from '../tts-engine';
import { PlainCharacterPhonemizer } from './phonemizer';
import { PiperTts } from './piper-tts';
import { piperPhonemeIds, readPiperVoice } from './piper-voice-config';

jest.setTimeout(20_000);

async function collect(stream: TtsStream): Promise<Int16Array[]> {
  const chunks: Int16Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('PiperTts on stand-in Piper voices (real runtime)', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;
  let single: string;
  let multi: string;
  const phonemizer = new PlainCharacterPhonemizer();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'piper-'));
    single = join(dir, 'single', 'en_US-test-medium.onnx');
    multi = join(dir, 'multi', 'en_US-multi-medium.onnx');
    await writePiperStandIn(single);
    await writePiperStandIn(multi, { speakers: ['alice', 'bob'], sampleRate: 16000 });
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log: () => undefined, warn: () => undefined } });
  });

  afterAll(async () => {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('turns phonemes into ids as piper-phonemize does: ^ _ then each phoneme and _, then $', async () => {
    const voice = await readPiperVoice(single, 'piper');
    expect(piperPhonemeIds(voice, 'hi!')).toEqual([1, 0, 21, 0, 22, 0, 4, 0, 2]);
    expect(piperPhonemeIds(voice, 'h\u{1F600}i')).toEqual([1, 0, 21, 0, 22, 0, 2]); // unknown symbols skipped
  });

  it("streams PCM16 at the voice's sample rate, one chunk per sentence", async () => {
    const piper = await PiperTts.load({ runtime, modelPath: single, phonemizer });
    expect(piper.sampleRate).toBe(22050);
    const stream = piper.synthesize('Good morning. Your balance is ten dollars.', { callId: 'call-1' });
    expect(stream.sampleRate).toBe(22050);
    const chunks = await collect(stream);
    expect(chunks).toHaveLength(2);
    // ids per sentence = 2 * phonemes + 3; the stand-in makes 256 samples per id.
    expect(chunks[0]!.length).toBe((2 * 'good morning.'.length + 3) * 256);
    const result = await stream.result;
    expect(result.audioSeconds).toBeCloseTo((chunks[0]!.length + chunks[1]!.length) / 22050, 9);
    expect(result.timings.runMs).toBeGreaterThan(0);
  });

  it('applies length_scale from the options (or the voice config) to the audio length', async () => {
    const slow = await PiperTts.load({ runtime, modelPath: single, phonemizer, lengthScale: 1.5, name: 'piper-slow' });
    const [chunk] = await collect(slow.synthesize('Hello.', { callId: 'c' }));
    expect(chunk!.length).toBe(Math.floor((2 * 'hello.'.length + 3) * 256 * 1.5));
  });

  it('feeds sid for multi-speaker voices: speakers sound different, unknown ones are refused', async () => {
    const piper = await PiperTts.load({ runtime, modelPath: join(dir, 'multi'), phonemizer, defaultSpeaker: 'alice' });
    expect(piper.sampleRate).toBe(16000);
    const [alice] = await collect(piper.synthesize('Hello.', { callId: 'c' }));
    const [bob] = await collect(piper.synthesize('Hello.', { callId: 'c', voice: 'bob' }));
    expect(bob!.length).toBe(alice!.length);
    expect(bob).not.toEqual(alice);
    await expect(collect(piper.synthesize('Hello.', { callId: 'c', voice: 'carol' }))).rejects.toMatchObject({ code: 'bad_request' });
  });

  it('refuses a config that does not match the model, and a missing config, at load', async () => {
    const config = JSON.parse(await readFile(`${single}.json`, 'utf8'));
    const mismatched = join(dir, 'single', 'mismatched.onnx');
    await writeFile(mismatched, await readFile(single));
    await writeFile(`${mismatched}.json`, JSON.stringify({ ...config, num_speakers: 2, speaker_id_map: { a: 0, b: 1 } }));
    await expect(PiperTts.load({ runtime, modelPath: mismatched, phonemizer })).rejects.toThrow(/'sid'/);
    await expect(PiperTts.load({ runtime, modelPath: join(dir, 'nothing.onnx'), phonemizer })).rejects.toMatchObject({ code: 'model_missing' });
  });
});
