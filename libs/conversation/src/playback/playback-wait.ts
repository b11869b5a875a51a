import type { PlaybackTracker } from './playback-tracker';

/** Extra time allowed for the call edge to echo the last mark after the audio's own length. */
const PLAYBACK_ECHO_GRACE_MS = 3000;

/**
 * Resolves once everything the tracker sent has been played (its marks came back), or after the
 * audio's own length and a grace, should the marks never come back: no wait on a call is unbounded.
 */
export async function waitUntilPlayed(tracker: PlaybackTracker): Promise<void> {
  const boundMs = tracker.sentSeconds * 1000 + PLAYBACK_ECHO_GRACE_MS;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([tracker.whenDrained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
  clearTimeout(timer);
}
