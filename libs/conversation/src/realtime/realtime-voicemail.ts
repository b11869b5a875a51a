import type { VoicemailPlayback } from '../agent/voicemail-drop';
import type { TranscriptSource } from '../records/conversation-records';
import { voicemailPlaybackOf } from '../playback/voicemail-playback';
import { CLOSING_WORDS_TIMEOUT_MS } from './requested-lines';
import type { SpokenItem } from './spoken-item';

/**
 * A speech-to-speech model says about 15 characters a second; the wait for a voicemail to have
 * been heard allows 100 ms a character on top of the usual bound for a line, so a long message
 * is never cut by the bound meant for a goodbye, and a model that never says it still ends the call.
 */
const VOICEMAIL_MS_PER_CHAR = 100;

/** What the realtime session lends the voicemail: its way of saying a line, and of cutting what it says. */
export interface RealtimeVoicemailHost {
  /** Stops the conversation: the item being spoken is cut (cleared on the call), a pending tool action dropped. */
  stopConversation(): void;
  say(text: string, source: TranscriptSource, then: () => Promise<void>, timeoutMs: number): void;
  isClosed(): boolean;
}

/**
 * The realtime agent's voicemail: the model is asked to say the message word for word (the
 * agent's own voice), and it counts as heard when its item's marks have come back, as every line
 * the session asks for. The item is recognised by its source when it starts (onItemStarted).
 */
export class RealtimeVoicemail {
  private item: SpokenItem | undefined;
  private settle: ((playback: VoicemailPlayback) => void) | undefined;
  private text = '';

  constructor(private readonly host: RealtimeVoicemailHost) {}

  leaveMessage(text: string): Promise<VoicemailPlayback> {
    this.text = text;
    this.host.stopConversation();
    return new Promise((resolve) => {
      this.settle = resolve;
      this.host.say(text, 'voicemail', async () => this.finish(), CLOSING_WORDS_TIMEOUT_MS + text.length * VOICEMAIL_MS_PER_CHAR);
    });
  }

  itemStarted(item: SpokenItem): void {
    if (item.source === 'voicemail') this.item = item;
  }

  /** The call ended first: the message counts as cut, with what was heard of it. */
  callClosed(): void {
    this.finish();
  }

  private finish(): void {
    const settle = this.settle;
    this.settle = undefined;
    settle?.(voicemailPlaybackOf(this.text, this.item?.tracker, this.host.isClosed()));
  }
}
