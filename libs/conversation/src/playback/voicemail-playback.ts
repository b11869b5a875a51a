import type { VoicemailPlayback } from '../agent/voicemail-drop';
import type { PlaybackTracker } from './playback-tracker';

/** A voicemail's playback as its tracker measured it (mark echoes), for the `voicemail_left` event. */
export function voicemailPlaybackOf(text: string, tracker: PlaybackTracker | undefined, callEnded: boolean): VoicemailPlayback {
  const sentMs = (tracker?.sentSeconds ?? 0) * 1000;
  const heardMs = (tracker?.heardSeconds ?? 0) * 1000;
  // Whole segments count in full once their final mark came back, so "in full" is an exact comparison.
  return { text, sentMs, heardMs, heardInFull: sentMs > 0 && heardMs >= sentMs, callEnded };
}
