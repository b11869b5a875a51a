import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AudioError } from '../audio-error';
import { decodeMulaw, encodeMulaw } from '../codec/mulaw';
import { readWav, writeWav } from './wav';

const FIXTURES = join(__dirname, '../../../../test/fixtures/speech');

/** Assembles a RIFF file from raw chunks, so tests control order, padding and sizes. */
function riff(chunks: ReadonlyArray<{ id: string; body: Uint8Array; declaredSize?: number }>): Uint8Array {
  const parts: number[] = [];
  const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
  for (const { id, body, declaredSize } of chunks) {
    parts.push(...Array.from(id, (c) => c.charCodeAt(0)), ...u32(declaredSize ?? body.length), ...body);
    if (body.length % 2 === 1) parts.push(0);
  }
  return Uint8Array.from([...Array.from('RIFF', (c) => c.charCodeAt(0)), ...u32(parts.length + 4), ...Array.from('WAVE', (c) => c.charCodeAt(0)), ...parts]);
}

function fmt(formatTag: number, channels: number, sampleRate: number, bitsPerSample: number): Uint8Array {
  const body = new Uint8Array(16);
  const view = new DataView(body.buffer);
  const blockAlign = (channels * bitsPerSample) / 8;
  view.setUint16(0, formatTag, true);
  view.setUint16(2, channels, true);
  view.setUint32(4, sampleRate, true);
  view.setUint32(8, sampleRate * blockAlign, true);
  view.setUint16(12, blockAlign, true);
  view.setUint16(14, bitsPerSample, true);
  return body;
}

function pcmBytes(samples: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  samples.forEach((sample, i) => view.setInt16(2 * i, sample, true));
  return bytes;
}

function errorOf(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('readWav', () => {
  const fixtures = readdirSync(FIXTURES).filter((name) => name.endsWith('.16k.wav'));

  it('finds the speech fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(5);
  });

  it.each(fixtures)('reads %s as 16 kHz mono PCM16', (name) => {
    const bytes = readFileSync(join(FIXTURES, name));
    const audio = readWav(bytes);
    expect(audio).toMatchObject({ sampleRate: 16000, channelCount: 1, sourceEncoding: 'pcm16' });
    // Canonical 44-byte header: everything after it is samples.
    expect(audio.samples.length).toBe((bytes.length - 44) / 2);
    // Speech with 0.2 s of silence at each end: silent edges, a loud middle.
    expect(audio.samples.subarray(0, 1600).every((s) => Math.abs(s) < 64)).toBe(true);
    expect(Math.max(...audio.samples.map(Math.abs))).toBeGreaterThan(3000);
  });

  it('round-trips writeWav output bit for bit', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234, -4321]);
    const bytes = writeWav({ sampleRate: 8000, samples });
    expect(bytes.length).toBe(44 + 14);
    expect(readWav(bytes)).toEqual({ sampleRate: 8000, channelCount: 1, samples, sourceEncoding: 'pcm16' });
    const fixture = readFileSync(join(FIXTURES, fixtures[0]!));
    expect(Buffer.from(writeWav(readWav(fixture))).equals(fixture)).toBe(true);
  });

  it('accepts chunks in any order and skips unknown and odd-sized ones', () => {
    const bytes = riff([
      { id: 'LIST', body: Uint8Array.of(1, 2, 3) }, // odd size: followed by a pad byte
      { id: 'data', body: pcmBytes([100, -100, 200, -200]) },
      { id: 'junk', body: new Uint8Array(10) },
      { id: 'fmt ', body: fmt(1, 2, 44100, 16) },
    ]);
    expect(readWav(bytes)).toEqual({ sampleRate: 44100, channelCount: 2, samples: Int16Array.of(100, -100, 200, -200), sourceEncoding: 'pcm16' });
  });

  it('reads mu-law (format 7) WAV files, decoding to PCM16', () => {
    const ulaw = readFileSync(join(FIXTURES, fixtures[0]!.replace('.16k.wav', '.8k.ulaw')));
    const audio = readWav(riff([{ id: 'fmt ', body: fmt(7, 1, 8000, 8) }, { id: 'data', body: ulaw }]));
    expect(audio.sourceEncoding).toBe('mulaw');
    expect(audio.samples).toEqual(decodeMulaw(ulaw));
  });

  it('reads A-law (format 6) and WAVE_FORMAT_EXTENSIBLE-wrapped PCM', () => {
    const alawAudio = readWav(riff([{ id: 'fmt ', body: fmt(6, 1, 8000, 8) }, { id: 'data', body: Uint8Array.of(0xd5, 0x55) }]));
    expect(Array.from(alawAudio.samples)).toEqual([8, -8]);
    const extensible = new Uint8Array(40);
    extensible.set(fmt(0xfffe, 1, 16000, 16));
    new DataView(extensible.buffer).setUint16(24, 1, true); // sub-format GUID starts with the PCM tag
    expect(readWav(riff([{ id: 'fmt ', body: extensible }, { id: 'data', body: pcmBytes([7, 8]) }])).samples).toEqual(Int16Array.of(7, 8));
  });

  it('explains what is wrong with files it cannot read', () => {
    const cases: Array<[string, Uint8Array, string]> = [
      ['not RIFF', new TextEncoder().encode('ID3 this is an mp3 file....'), 'wav_not_riff'],
      ['no data', riff([{ id: 'fmt ', body: fmt(1, 1, 8000, 16) }]), 'wav_missing_chunk'],
      ['no fmt', riff([{ id: 'data', body: pcmBytes([1]) }]), 'wav_missing_chunk'],
      ['float', riff([{ id: 'fmt ', body: fmt(3, 1, 8000, 32) }, { id: 'data', body: new Uint8Array(8) }]), 'wav_unsupported_format'],
      ['24-bit', riff([{ id: 'fmt ', body: fmt(1, 1, 8000, 24) }, { id: 'data', body: new Uint8Array(6) }]), 'wav_unsupported_format'],
      ['half a sample', riff([{ id: 'fmt ', body: fmt(1, 1, 8000, 16) }, { id: 'data', body: new Uint8Array(3) }]), 'wav_truncated'],
      ['cut short', riff([{ id: 'fmt ', body: fmt(1, 1, 8000, 16) }, { id: 'data', body: new Uint8Array(8), declaredSize: 800 }]), 'wav_truncated'],
    ];
    for (const [label, bytes, code] of cases) {
      const error = errorOf(() => readWav(bytes));
      expect([label, error]).toEqual([label, expect.any(AudioError)]);
      expect([label, (error as AudioError).code, (error as AudioError).retryable]).toEqual([label, code, false]);
    }
    expect(errorOf(() => readWav(riff([{ id: 'fmt ', body: fmt(3, 1, 8000, 32) }, { id: 'data', body: new Uint8Array(8) }])))).toMatchObject({
      message: expect.stringContaining('32-bit float'),
    });
  });
});

describe('writeWav', () => {
  it('writes a canonical PCM16 header', () => {
    const bytes = writeWav({ sampleRate: 16000, samples: new Int16Array(3) });
    const view = new DataView(bytes.buffer);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('RIFF');
    expect(view.getUint32(4, true)).toBe(36 + 6);
    expect(view.getUint16(20, true)).toBe(1);
    expect(view.getUint16(22, true)).toBe(1);
    expect(view.getUint32(24, true)).toBe(16000);
    expect(view.getUint32(28, true)).toBe(32000);
    expect(view.getUint32(40, true)).toBe(6);
  });

  it('writes stereo when asked and refuses samples that do not split into channels', () => {
    expect(readWav(writeWav({ sampleRate: 8000, samples: Int16Array.of(1, 2, 3, 4), channelCount: 2 })).channelCount).toBe(2);
    expect(() => writeWav({ sampleRate: 8000, samples: Int16Array.of(1, 2, 3), channelCount: 2 })).toThrow(AudioError);
    expect(() => writeWav({ sampleRate: 0, samples: new Int16Array(1) })).toThrow(AudioError);
  });

  it('stores decoded mu-law losslessly (every code survives PCM16 WAV and re-encoding)', () => {
    // 0x7F is mu-law's "negative zero": it decodes to 0 like 0xFF, and 0 encodes as 0xFF.
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i).filter((code) => code !== 0x7f);
    const pcm = decodeMulaw(codes);
    expect(encodeMulaw(readWav(writeWav({ sampleRate: 8000, samples: pcm })).samples)).toEqual(codes);
  });
});
