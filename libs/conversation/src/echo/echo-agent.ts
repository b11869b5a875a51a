import type { AgentAudioOutput, AgentCallContext, AgentEngine, AgentSession } from '../agent/agent-session';

/** The echo agent works at 16 kHz so caller audio crosses the same 8k->16k->8k chains as a real agent's. */
export const ECHO_SAMPLE_RATE = 16_000;

/**
 * One mark per second of echoed audio: enough to prove playback progress, cheap to record. The edge
 * sends it on the next frame boundary, so it adds nothing to the echo.
 */
const MARK_EVERY_SAMPLES = ECHO_SAMPLE_RATE;

/**
 * Loopback agent: plays the caller's audio straight back. It exists to prove the whole inbound and
 * outbound chain (decode, resample, encode, framing, marks) end to end with no model in the way.
 */
export class EchoAgentEngine implements AgentEngine {
  readonly name = 'echo';
  readonly audio = { inputSampleRate: ECHO_SAMPLE_RATE, outputSampleRate: ECHO_SAMPLE_RATE };

  createSession(_context: AgentCallContext, output: AgentAudioOutput): AgentSession {
    return new EchoAgentSession(output);
  }
}

class EchoAgentSession implements AgentSession {
  private samplesSinceMark = 0;
  private marksSent = 0;
  private closed = false;

  constructor(private readonly output: AgentAudioOutput) {}

  pushAudio(pcm: Int16Array): void {
    if (this.closed) return;
    this.output.play(pcm);
    this.samplesSinceMark += pcm.length;
    if (this.samplesSinceMark >= MARK_EVERY_SAMPLES) {
      this.samplesSinceMark -= MARK_EVERY_SAMPLES;
      this.marksSent += 1;
      this.output.mark(`echo:${this.marksSent}`);
    }
  }

  onDtmf(): void {
    // The echo agent has nothing to say about keys; the edge records them as call events.
  }

  onMarkEchoed(): void {
    // Marks matter to agents that track what the caller heard; the echo agent only emits them.
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // The echo is one utterance as long as the call. When the call ends from this side (shutdown)
    // and the stream still takes audio, the last partial frame goes out; after the caller's stop
    // the edge refuses it, as a carrier would.
    this.output.endOfUtterance();
  }
}
