/**
 * Caller input an agent holds while its engines get ready (models load, a speech-to-speech session
 * connects): about 10 s of 20 ms frames, key presses counted with them, the bound the call edge
 * holds input to while it authorises the call. Past it the agent ends the call, saying why, rather
 * than drop what the caller said or hold without end.
 */
export const MAX_INPUT_HELD_UNTIL_READY = 500;

/** What was held, in arrival order: caller audio, and finished keypad inputs. */
export interface HeldInput<Frame> {
  frames: Frame[];
  keyInputs: string[][];
}

export class InputHeldUntilReady<Frame> {
  private held: HeldInput<Frame> = { frames: [], keyInputs: [] };

  get size(): number {
    return this.held.frames.length + this.held.keyInputs.length;
  }

  /** Holds a frame (a copy the caller made: the edge reuses its buffers). False when full: nothing was held. */
  holdFrame(frame: Frame): boolean {
    if (this.size >= MAX_INPUT_HELD_UNTIL_READY) return false;
    this.held.frames.push(frame);
    return true;
  }

  /** False when full: nothing was held. */
  holdKeys(digits: string[]): boolean {
    if (this.size >= MAX_INPUT_HELD_UNTIL_READY) return false;
    this.held.keyInputs.push(digits);
    return true;
  }

  /** Everything held, and forgets it. */
  take(): HeldInput<Frame> {
    const held = this.held;
    this.held = { frames: [], keyInputs: [] };
    return held;
  }
}
