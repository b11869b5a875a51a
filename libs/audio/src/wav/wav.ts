import { AudioError } from '../audio-error';
import { decodeAlaw } from '../codec/alaw';
import { decodeMulaw } from '../codec/mulaw';

/**
 * RIFF/WAVE reading and writing for test fixtures, recordings and the simulated caller.
 *
 * Reads 16-bit PCM (any channel count, interleaved) and G.711 mu-law (format 7) / A-law (format 6)
 * 8-bit files, decoded to 16-bit PCM; WAVE_FORMAT_EXTENSIBLE wrapping any of those is accepted.
 * Chunks may come in any order and unknown ones (LIST, fact, ...) are skipped. Anything else is
 * refused with an AudioError saying what was found, never guessed at.
 * Writes 16-bit PCM (mono by default).
 */

export type WavSourceEncoding = 'pcm16' | 'mulaw' | 'alaw';

export interface WavAudio {
  readonly sampleRate: number;
  readonly channelCount: number;
  /** 16-bit PCM, channels interleaved. */
  readonly samples: Int16Array;
  /** How the samples were stored in the file (readWav only; writeWav always writes 'pcm16'). */
  readonly sourceEncoding?: WavSourceEncoding;
}

export interface WavWriteInput {
  readonly sampleRate: number;
  /** 16-bit PCM, channels interleaved. */
  readonly samples: Int16Array;
  /** Defaults to 1 (mono). */
  readonly channelCount?: number;
}

const FORMAT_PCM = 1;
const FORMAT_ALAW = 6;
const FORMAT_MULAW = 7;
const FORMAT_EXTENSIBLE = 0xfffe;
const HEADER_BYTES = 44;

interface FormatChunk {
  readonly formatTag: number;
  readonly channelCount: number;
  readonly sampleRate: number;
  readonly blockAlign: number;
  readonly bitsPerSample: number;
}

export function readWav(bytes: Uint8Array): WavAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || fourCc(bytes, 0) !== 'RIFF' || fourCc(bytes, 8) !== 'WAVE') {
    throw new AudioError('wav_not_riff', 'not a RIFF/WAVE file (missing "RIFF....WAVE" header)');
  }
  let format: FormatChunk | undefined;
  let data: Uint8Array | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = fourCc(bytes, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (body + size > bytes.length) {
      throw new AudioError('wav_truncated', `chunk "${id}" claims ${size} bytes but only ${bytes.length - body} remain`);
    }
    if (id === 'fmt ') format = readFormat(view, body, size);
    else if (id === 'data') data = bytes.subarray(body, body + size);
    // Chunks are word-aligned: an odd-sized chunk is followed by one pad byte.
    offset = body + size + (size & 1);
  }
  if (format === undefined) throw new AudioError('wav_missing_chunk', 'no "fmt " chunk');
  if (data === undefined) throw new AudioError('wav_missing_chunk', 'no "data" chunk');
  return decodeData(format, data);
}

function readFormat(view: DataView, body: number, size: number): FormatChunk {
  if (size < 16) throw new AudioError('wav_invalid_header', `"fmt " chunk is ${size} bytes, at least 16 expected`);
  let formatTag = view.getUint16(body, true);
  const channelCount = view.getUint16(body + 2, true);
  const sampleRate = view.getUint32(body + 4, true);
  const blockAlign = view.getUint16(body + 12, true);
  const bitsPerSample = view.getUint16(body + 14, true);
  if (formatTag === FORMAT_EXTENSIBLE) {
    // cbSize(2) validBits(2) channelMask(4), then the sub-format GUID whose first 2 bytes are the tag.
    if (size < 40) throw new AudioError('wav_invalid_header', 'WAVE_FORMAT_EXTENSIBLE "fmt " chunk shorter than 40 bytes');
    formatTag = view.getUint16(body + 24, true);
  }
  if (channelCount === 0) throw new AudioError('wav_invalid_header', 'channel count is 0');
  if (sampleRate === 0) throw new AudioError('wav_invalid_header', 'sample rate is 0');
  return { formatTag, channelCount, sampleRate, blockAlign, bitsPerSample };
}

function decodeData(format: FormatChunk, data: Uint8Array): WavAudio {
  const { formatTag, channelCount, sampleRate, bitsPerSample } = format;
  const encoding = encodingOf(formatTag, bitsPerSample);
  const bytesPerSample = encoding === 'pcm16' ? 2 : 1;
  if (format.blockAlign !== bytesPerSample * channelCount) {
    throw new AudioError('wav_invalid_header', `block align ${format.blockAlign} does not match ${channelCount} channel(s) of ${bitsPerSample}-bit samples`);
  }
  if (data.length % format.blockAlign !== 0) {
    throw new AudioError('wav_truncated', `data chunk (${data.length} bytes) ends inside a sample frame of ${format.blockAlign} bytes`);
  }
  if (encoding === 'mulaw') return { sampleRate, channelCount, samples: decodeMulaw(data), sourceEncoding: encoding };
  if (encoding === 'alaw') return { sampleRate, channelCount, samples: decodeAlaw(data), sourceEncoding: encoding };
  const samples = new Int16Array(data.length / 2);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(2 * i, true);
  return { sampleRate, channelCount, samples, sourceEncoding: encoding };
}

function encodingOf(formatTag: number, bitsPerSample: number): WavSourceEncoding {
  if (formatTag === FORMAT_PCM && bitsPerSample === 16) return 'pcm16';
  if (formatTag === FORMAT_MULAW && bitsPerSample === 8) return 'mulaw';
  if (formatTag === FORMAT_ALAW && bitsPerSample === 8) return 'alaw';
  const name = formatTag === FORMAT_PCM ? `${bitsPerSample}-bit PCM` : formatTag === 3 ? `${bitsPerSample}-bit float` : `format tag ${formatTag} (${bitsPerSample}-bit)`;
  throw new AudioError('wav_unsupported_format', `unsupported WAV encoding: ${name}; expected 16-bit PCM, mu-law or A-law`);
}

/** Writes a canonical 44-byte-header PCM16 WAV (mono unless channelCount says otherwise). */
export function writeWav(audio: WavWriteInput): Uint8Array {
  const { sampleRate, samples } = audio;
  const channelCount = audio.channelCount ?? 1;
  if (samples.length % channelCount !== 0) throw new AudioError('invalid_signal', `${samples.length} samples do not split into ${channelCount} channels`);
  const dataBytes = samples.length * 2;
  const bytes = new Uint8Array(WAV_HEADER_BYTES + dataBytes);
  bytes.set(wavHeader({ sampleRate, channelCount, dataBytes }));
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(WAV_HEADER_BYTES + 2 * i, samples[i]!, true);
  return bytes;
}

/** Size of the canonical PCM16 header that wavHeader() writes. */
export const WAV_HEADER_BYTES = HEADER_BYTES;

/**
 * The canonical 44-byte PCM16 header for `dataBytes` of interleaved samples. A file written as it
 * grows (a call recording) starts with a header for 0 bytes and rewrites it once the length is known.
 */
export function wavHeader(format: { sampleRate: number; channelCount: number; dataBytes: number }): Uint8Array {
  const { sampleRate, channelCount, dataBytes } = format;
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new AudioError('invalid_sample_rate', `sample rate must be a positive integer, got ${sampleRate}`);
  if (!Number.isInteger(channelCount) || channelCount <= 0) throw new AudioError('wav_invalid_header', `channel count must be a positive integer, got ${channelCount}`);
  if (!Number.isInteger(dataBytes) || dataBytes < 0 || dataBytes > 0xffffffff - 36) throw new AudioError('wav_invalid_header', `data size must fit a RIFF chunk, got ${dataBytes}`);
  const bytes = new Uint8Array(HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  writeFourCc(bytes, 0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  writeFourCc(bytes, 8, 'WAVE');
  writeFourCc(bytes, 12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, FORMAT_PCM, true);
  view.setUint16(22, channelCount, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channelCount * 2, true);
  view.setUint16(32, channelCount * 2, true);
  view.setUint16(34, 16, true);
  writeFourCc(bytes, 36, 'data');
  view.setUint32(40, dataBytes, true);
  return bytes;
}

function fourCc(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!, bytes[offset + 3]!);
}

function writeFourCc(bytes: Uint8Array, offset: number, id: string): void {
  for (let i = 0; i < 4; i++) bytes[offset + i] = id.charCodeAt(i);
}
