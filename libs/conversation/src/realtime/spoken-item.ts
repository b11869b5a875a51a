import { PlaybackTracker, wordPrefix } from '../playback/playback-tracker';
import { waitUntilPlayed } from '../playback/playback-wait';
import type { TranscriptSource } from '../records/conversation-records';

/** When the caller's turn that an answer replies to ended (call offsets, ms). */
export interface TurnEnd {
  endOfSpeechMs: number | undefined;
  endOfTurnMs: number;
}

/** One assistant item being spoken: its audio progress (marks) and its transcript. */
export interface SpokenItem {
  itemId: string;
  responseId: string;
  /** 'speech' for the model's own answers; the line's source when the session asked for it. */
  source: TranscriptSource;
  /** The line the session asked for, recorded when the model's transcript is empty. */
  requestedText: string | undefined;
  tracker: PlaybackTracker;
  transcript: string;
  firstAudioMs: number;
  firstMarkEchoedMs: number | undefined;
  /** The caller's turn that led to it, when known. */
  turnEnd: TurnEnd | undefined;
  /** The response's audio is all here (response_done arrived). */
  responseComplete: boolean;
  done: boolean;
}

/** What the model said; the requested line when its transcript is missing (transcription off). */
export function spokenTextOf(item: SpokenItem): string {
  return item.transcript.trim().length > 0 ? item.transcript : (item.requestedText ?? '');
}

/** The words the caller heard: the heard share of the audio sent, applied to the text so far. */
export function heardTextOf(item: SpokenItem): string {
  const sentMs = item.tracker.sentSeconds * 1000;
  return wordPrefix(spokenTextOf(item), sentMs > 0 ? (item.tracker.heardSeconds * 1000) / sentMs : 0);
}

/** Resolves once the item's audio has all been played (or after a bound, should marks never come back). */
export async function waitForPlayback(item: SpokenItem): Promise<void> {
  // The item's audio is complete: close its segment so its final mark says when it has all played.
  if (item.tracker.segmentOpen) item.tracker.endSegment();
  await waitUntilPlayed(item.tracker);
}
