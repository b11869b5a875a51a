import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { downmixToMono, encodeMulaw, readWav, resampleWhole } from '@switchboard/audio';

/** The phone line's format: what Twilio puts in a media payload. */
export const LINE_SAMPLE_RATE = 8000;
const RAW_MULAW_EXTENSIONS = new Set(['.ulaw', '.mulaw', '.ul']);

export class CallAudioInputError extends Error {
  override readonly name = 'CallAudioInputError';
  readonly retryable = false;
}

export interface CallerAudio {
  mulaw: Uint8Array;
  /** What the input was, for the report line ("16000 Hz WAV, 2 channels, resampled"). */
  description: string;
  durationMs: number;
}

/** Reads a WAV (any rate, mono or interleaved multi-channel) or a headerless 8 kHz mu-law file. */
export async function loadCallerAudio(path: string): Promise<CallerAudio> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CallAudioInputError(`Cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : String(code ?? error)}`);
  }
  if (bytes.length >= 12 && bytes.toString('ascii', 0, 4) === 'RIFF' && bytes.toString('ascii', 8, 12) === 'WAVE') {
    return wavToMulaw(bytes, path);
  }
  if (!RAW_MULAW_EXTENSIONS.has(extname(path).toLowerCase())) {
    throw new CallAudioInputError(`${path} is neither a WAV file nor headerless mu-law (.ulaw, .mulaw, .ul)`);
  }
  if (bytes.length === 0) throw new CallAudioInputError(`${path} is empty`);
  const mulaw = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  return { mulaw, description: '8000 Hz mu-law (raw)', durationMs: mulaw.length / (LINE_SAMPLE_RATE / 1000) };
}

function wavToMulaw(bytes: Buffer, path: string): CallerAudio {
  let wav: ReturnType<typeof readWav>;
  try {
    wav = readWav(bytes);
  } catch (error) {
    throw new CallAudioInputError(`${path} is not a readable WAV: ${error instanceof Error ? error.message : String(error)}`);
  }
  const mono = downmixToMono(wav.samples, wav.channelCount);
  if (mono.length === 0) throw new CallAudioInputError(`${path} holds no audio`);
  const line = resampleWhole(mono, wav.sampleRate, LINE_SAMPLE_RATE);
  const channels = wav.channelCount === 1 ? 'mono' : `${wav.channelCount} channels mixed down`;
  const resampled = wav.sampleRate === LINE_SAMPLE_RATE ? '' : ', resampled to 8000 Hz';
  return {
    mulaw: encodeMulaw(line),
    description: `${wav.sampleRate} Hz WAV, ${channels}${resampled}`,
    durationMs: line.length / (LINE_SAMPLE_RATE / 1000),
  };
}
