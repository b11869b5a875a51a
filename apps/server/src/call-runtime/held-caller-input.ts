/** What the agent gets, once it exists, of what the caller sent before (frames as their carrier sent them). */
export interface CallerInputTarget {
  frame(bytes: Uint8Array): void;
  digit(digit: string): void;
}

type HeldItem = { kind: 'frame'; bytes: Uint8Array } | { kind: 'digit'; digit: string };

/**
 * What a caller sends while its stream token is being claimed (the call and its agent are not known
 * yet): audio frames and key presses, held in arrival order and replayed in that order once the
 * agent exists. Nothing is dropped: when the bound is reached, hold() says no and the call's runtime ends
 * the call with a protocol error that says why, rather than let the agent miss what the caller said.
 */
export class HeldCallerInput {
  private items: HeldItem[] = [];

  constructor(readonly maxItems: number) {}

  get size(): number {
    return this.items.length;
  }

  get frames(): number {
    return this.items.reduce((count, item) => count + (item.kind === 'frame' ? 1 : 0), 0);
  }

  /** Holds a copy of the frame (the Twilio session reuses its payload buffer). False when full: nothing was held. */
  holdFrame(bytes: Uint8Array): boolean {
    if (this.items.length >= this.maxItems) return false;
    // A copy whatever `bytes` is: were it a Buffer, slice() would be a view onto the reused buffer.
    this.items.push({ kind: 'frame', bytes: new Uint8Array(bytes) });
    return true;
  }

  /** False when full: nothing was held. */
  holdDigit(digit: string): boolean {
    if (this.items.length >= this.maxItems) return false;
    this.items.push({ kind: 'digit', digit });
    return true;
  }

  /** Hands everything held to `target`, oldest first, and forgets it. */
  replay(target: CallerInputTarget): void {
    const items = this.items;
    this.items = [];
    for (const item of items) {
      if (item.kind === 'frame') target.frame(item.bytes);
      else target.digit(item.digit);
    }
  }

  /** The stream ended before the call was known: nothing will take these. */
  discard(): void {
    this.items = [];
  }
}
