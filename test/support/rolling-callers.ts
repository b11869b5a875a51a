import { decodeMulaw, encodeMulaw, sineTone } from '@switchboard/audio';
import { type CallResult, SimulatedTwilioCall } from '@switchboard/simulated-caller';

/** One call a caller slot placed, as the caller lived it. */
export interface PlacedCall {
  slot: number;
  callSid: string;
  /** The server's call id (the stream's parameter); null for a call turned away. */
  callId: string | null;
  rejected: boolean;
  sayText: string;
  result: CallResult | null;
  /**
   * How long after its trailing silence the caller waited for the echo of its last words (a
   * person waits for the other side to finish too): the echo's lag, not a loss. Null when not reached.
   */
  echoWaitMs: number | null;
  /** Set when the caller's side broke (a webhook or socket that failed): always a finding. */
  error: string | null;
}

export interface CallerLine {
  /** Where Twilio's requests go: the load balancer. */
  url: string;
  number: string;
  account: { accountSid: string; authToken: string };
}

/** Tones of 1.5 to 4.5 s: calls of different lengths, so that they end all through a drain. */
const TONES = [1500, 2300, 3100, 3900, 4500].map((durationMs) =>
  encodeMulaw(sineTone({ frequencyHz: 440, durationMs, sampleRate: 8000, amplitudeDbfs: -12 })),
);
/** Silence after the caller's audio, before the hang-up: the echo of the last frames comes back in it. */
const TRAILING_SILENCE_MS = 600;
/** The longest a caller waits after that for the echo of its last words before hanging up anyway. */
const ECHO_WAIT_LIMIT_MS = 5_000;

/** A 20 ms frame (160 mu-law bytes) that carries the tone rather than silence. */
export function isVoicedFrame(samples: Int16Array): boolean {
  let energy = 0;
  for (const sample of samples) energy += sample * sample;
  return samples.length > 0 && Math.sqrt(energy / samples.length) > 1000;
}

/**
 * `slots` callers that phone `line` over and over, each as Twilio would (signed voice webhook,
 * media socket, 20 ms frames, `stop`, then the signed `completed` status callback), until stop().
 * Every caller's first call is held connected until `releaseFirstCalls()`: the test looks at the
 * fleet with all of them live at once.
 */
export class RollingCallers {
  readonly calls: PlacedCall[] = [];
  private stopping = false;
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));
  private readonly connected: Array<() => void> = [];
  private readonly firstCallsConnected: Promise<void[]>;
  private running: Promise<void[]> | null = null;

  constructor(
    private readonly line: CallerLine,
    private readonly slots: number,
  ) {
    this.firstCallsConnected = Promise.all(Array.from({ length: slots }, () => new Promise<void>((resolve) => this.connected.push(resolve))));
  }

  start(): void {
    this.running = Promise.all(Array.from({ length: this.slots }, (_, slot) => this.runSlot(slot)));
  }

  /** Resolves once every slot's first call has its media stream open (or failed trying). */
  async allFirstCallsConnected(): Promise<void> {
    await this.firstCallsConnected;
  }

  releaseFirstCalls(): void {
    this.release();
  }

  /** Lets each caller finish the call it is on, places no more, and resolves when all have hung up. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.release();
    await this.running;
  }

  private async runSlot(slot: number): Promise<void> {
    // Spread the first dials over a second, as calls arrive rather than as one packet.
    await new Promise((resolve) => setTimeout(resolve, slot * (1000 / this.slots)));
    for (let round = 0; round === 0 || !this.stopping; round++) {
      const first = round === 0;
      const call = new SimulatedTwilioCall({
        serverUrl: this.line.url,
        authToken: this.line.account.authToken,
        accountSid: this.line.account.accountSid,
        from: `+1555${String(7_000_000 + slot * 1000 + (round % 1000)).padStart(7, '0')}`,
        to: this.line.number,
      });
      const placed: PlacedCall = { slot, callSid: call.parties.callSid, callId: null, rejected: false, sayText: '', result: null, echoWaitMs: null, error: null };
      this.calls.push(placed);
      try {
        const twiml = await call.dial();
        placed.rejected = twiml.rejected;
        placed.sayText = twiml.sayText;
        placed.callId = twiml.stream?.parameters['callId'] ?? null;
        if (!twiml.rejected) {
          let voicedEchoed = 0;
          call.on('message', (message) => {
            if (message.event === 'media' && isVoicedFrame(decodeMulaw(message.payload))) voicedEchoed++;
          });
          await call.connectMedia();
          if (first) this.connected[slot]?.();
          if (first) await this.released;
          const tone = TONES[(slot + round) % TONES.length]!;
          await call.streamAudio(tone, { trailingSilenceMs: TRAILING_SILENCE_MS });
          const waitFrom = performance.now();
          const voicedSent = tone.length / 160;
          while (voicedEchoed < voicedSent && performance.now() - waitFrom < ECHO_WAIT_LIMIT_MS) await new Promise((resolve) => setTimeout(resolve, 20));
          if (voicedEchoed >= voicedSent) placed.echoWaitMs = performance.now() - waitFrom;
          await call.hangup();
          await call.sendStatusCallback('completed');
        }
        placed.result = call.result();
      } catch (error) {
        placed.error = (error as Error).message;
        await call.dropConnection().catch(() => undefined);
      } finally {
        if (first) this.connected[slot]?.();
      }
    }
  }
}
