import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeMulaw, encodeMulaw, writeWav } from '@switchboard/audio';
import { CallAudioInputError, loadCallerAudio } from './call-audio-input';

const FIXTURES = join(__dirname, '../../../test/fixtures/speech');

function tone(sampleRate: number, durationMs: number, frequencyHz: number): Int16Array {
  const samples = new Int16Array(Math.round((sampleRate * durationMs) / 1000));
  for (let index = 0; index < samples.length; index += 1) {
    samples[index] = Math.round(8000 * Math.sin((2 * Math.PI * frequencyHz * index) / sampleRate));
  }
  return samples;
}

function correlation(a: Int16Array, b: Int16Array): number {
  const length = Math.min(a.length, b.length);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let index = 0; index < length; index += 1) {
    const x = a[index] ?? 0;
    const y = b[index] ?? 0;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb);
}

describe('loadCallerAudio', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-audio-in-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('resamples a 16 kHz WAV to the same speech as the 8 kHz fixture, aligned in time', async () => {
    const audio = await loadCallerAudio(join(FIXTURES, 'hours.16k.wav'));
    const reference = await readFile(join(FIXTURES, 'hours.8k.ulaw'));
    expect(audio.description).toBe('16000 Hz WAV, mono, resampled to 8000 Hz');
    expect(audio.mulaw.length).toBe(reference.length);
    // Same speech at the same sample: the filter delay has been removed (one sample off gives ~0.975).
    expect(correlation(decodeMulaw(audio.mulaw), decodeMulaw(reference))).toBeGreaterThan(0.99);
  });

  it('passes an 8 kHz mono WAV through with no resampling', async () => {
    const samples = tone(8000, 100, 440);
    const path = join(dir, 'a.wav');
    await writeFile(path, writeWav({ samples, sampleRate: 8000 }));
    const audio = await loadCallerAudio(path);
    expect(audio).toEqual({ mulaw: encodeMulaw(samples), description: '8000 Hz WAV, mono', durationMs: 100 });
  });

  it('mixes interleaved stereo down to mono', async () => {
    const left = tone(8000, 50, 300);
    const stereo = new Int16Array(left.length * 2);
    left.forEach((sample, index) => {
      stereo[2 * index] = sample;
      stereo[2 * index + 1] = 0;
    });
    const path = join(dir, 'stereo.wav');
    await writeFile(path, writeWav({ samples: stereo, sampleRate: 8000, channelCount: 2 }));
    const audio = await loadCallerAudio(path);
    expect(audio.description).toBe('8000 Hz WAV, 2 channels mixed down');
    expect(audio.mulaw).toEqual(encodeMulaw(left.map((sample) => Math.round(sample / 2))));
  });

  it('reads a headerless .ulaw file byte for byte', async () => {
    const path = join(FIXTURES, 'goodbye.8k.ulaw');
    const audio = await loadCallerAudio(path);
    expect(Buffer.from(audio.mulaw).equals(await readFile(path))).toBe(true);
    expect(audio.durationMs).toBe(audio.mulaw.length / 8);
  });

  it.each([
    ['a missing file', 'missing.wav', null, /no such file/],
    ['an empty .ulaw file', 'empty.ulaw', new Uint8Array(0), /is empty/],
    ['an unknown extension without a WAV header', 'a.mp3', new Uint8Array(100), /neither a WAV file nor headerless mu-law/],
    ['a truncated WAV', 'cut.wav', Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt '), /not a readable WAV/],
  ])('refuses %s with a CallAudioInputError', async (_label, name, content, message) => {
    const path = join(dir, name);
    if (content) await writeFile(path, content);
    await expect(loadCallerAudio(path)).rejects.toThrow(CallAudioInputError);
    await expect(loadCallerAudio(path)).rejects.toThrow(message);
  });
});
