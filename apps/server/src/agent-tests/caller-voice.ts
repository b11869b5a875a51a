import { concatPcm16, monoAtRate, readWav, resampleWhole } from '@switchboard/audio';
import { FliteTts } from '@switchboard/inference';
import { WEB_CALL_AUDIO } from '../web-calls/web-call-protocol';
import type { CallerTurn } from './scenario-suite.schema';

const RATE = WEB_CALL_AUDIO.sampleRate;

/** A caller turn that cannot be turned into audio (an unreadable WAV, say): the scenario errors with it. */
export class CallerVoiceError extends Error {
  override readonly name = 'CallerVoiceError';
}

/**
 * The simulated caller's voice: `say` text spoken by the built-in voice (Flite, in a worker thread,
 * so synthesis never blocks the event loop), `wavBase64` decoded and brought to the web call's
 * 16 kHz mono. One Flite worker for every run: scenarios run one at a time.
 */
export class CallerVoice {
  private flite: FliteTts | undefined;

  async audioFor(turn: CallerTurn, callId: string): Promise<Int16Array> {
    if (turn.say !== undefined) return this.speak(turn.say, callId);
    return wavTurn(turn.wavBase64 ?? '');
  }

  async close(): Promise<void> {
    await this.flite?.close();
    this.flite = undefined;
  }

  private async speak(text: string, callId: string): Promise<Int16Array> {
    this.flite ??= new FliteTts({ name: 'scenario caller voice' });
    const stream = this.flite.synthesize(text, { callId });
    const chunks: Int16Array[] = [];
    for await (const chunk of stream) chunks.push(chunk.slice());
    await stream.result;
    return resampleWhole(concatPcm16(chunks), stream.sampleRate, RATE);
  }
}

function wavTurn(base64: string): Int16Array {
  let wav;
  try {
    wav = readWav(new Uint8Array(Buffer.from(base64, 'base64')));
  } catch (error) {
    throw new CallerVoiceError(`a turn's WAV is not readable: ${error instanceof Error ? error.message : String(error)}`);
  }
  const samples = monoAtRate(wav, RATE);
  if (samples.length === 0) throw new CallerVoiceError("a turn's WAV holds no audio");
  return samples;
}
