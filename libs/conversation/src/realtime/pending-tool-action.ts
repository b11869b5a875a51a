import type { ToolAction } from '../tools/tool-contracts';
import { CLOSING_WORDS_TIMEOUT_MS } from './requested-lines';

interface Held {
  action: ToolAction;
  /** Sequence number of the response that called the tool. */
  toolSeq: number;
  /** A response after the tool's has finished: the model had its turn to say its closing words. */
  followUpDone: boolean;
  fallback: NodeJS.Timeout;
}

/**
 * A tool asked to end or transfer the call. It happens once the model has had its turn to say its
 * closing words (a response after the tool's has finished), or after a bound should it stay silent.
 */
export class PendingToolAction {
  private held: Held | undefined;

  /** `onTimeout`: the model never finished a response after the tool's; the action should happen now. */
  constructor(private readonly onTimeout: (toolName: string) => void) {}

  get waiting(): boolean {
    return this.held !== undefined;
  }

  /** Holds the action (the first one wins while one is waiting). */
  hold(action: ToolAction, toolSeq: number, toolName: string): void {
    if (this.held || action.type === 'none') return;
    const fallback = setTimeout(() => this.onTimeout(toolName), CLOSING_WORDS_TIMEOUT_MS);
    this.held = { action, toolSeq, followUpDone: false, fallback };
  }

  /** A response finished; true once the model has had its turn after the tool's response. */
  responseDone(seq: number): boolean {
    const held = this.held;
    if (!held) return false;
    if (seq > held.toolSeq) held.followUpDone = true;
    return held.followUpDone;
  }

  /** The action to perform now, and the response that called the tool; it is no longer waiting. */
  take(): { action: ToolAction; toolSeq: number } | undefined {
    const held = this.held;
    if (!held) return undefined;
    this.held = undefined;
    clearTimeout(held.fallback);
    return { action: held.action, toolSeq: held.toolSeq };
  }

  close(): void {
    clearTimeout(this.held?.fallback);
    this.held = undefined;
  }
}
