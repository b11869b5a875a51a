import { decodeMulaw } from '@switchboard/audio';
import type { CallAudioRecorder, RecordingSpoolFile } from '@switchboard/recordings';

/**
 * One call's recording while the call runs, as the call edges feed it: the caller's frames as they
 * arrive, the agent's frames as they are sent, and clears. Phone calls speak mu-law on both sides
 * (decoded here, which is lossless into 16 bits); browser calls speak PCM16.
 *
 * `finish()` is called once when the call ends; it closes the recorder and the spool file and
 * hands the rest (storing the file, the database row) to the service, which the call's end does
 * not wait for.
 */
export class LiveCallRecording {
  private decoded = new Int16Array(160);
  private finished = false;

  constructor(
    private readonly recorder: CallAudioRecorder,
    private readonly spool: RecordingSpoolFile,
    private readonly onFinished: (spool: RecordingSpoolFile, durationMs: number) => void,
  ) {}

  callerMulaw(mulaw: Uint8Array): void {
    this.recorder.callerAudio(this.decode(mulaw));
  }

  callerPcm(pcm: Int16Array): void {
    this.recorder.callerAudio(pcm);
  }

  agentMulawSent(mulaw: Uint8Array): void {
    this.recorder.agentAudioSent(this.decode(mulaw));
  }

  agentPcmSent(pcm: Int16Array): void {
    this.recorder.agentAudioSent(pcm);
  }

  agentCleared(): void {
    this.recorder.agentCleared();
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.recorder.finish();
    this.onFinished(this.spool, Math.round((this.recorder.samplesWritten * 1000) / this.recorder.sampleRate));
  }

  /** A view into a reused array: the recorder copies what it keeps. */
  private decode(mulaw: Uint8Array): Int16Array {
    if (this.decoded.length < mulaw.length) this.decoded = new Int16Array(mulaw.length);
    return decodeMulaw(mulaw, this.decoded.subarray(0, mulaw.length));
  }
}
