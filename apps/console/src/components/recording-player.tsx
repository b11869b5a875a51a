import { useCallback, useEffect, useImperativeHandle, useRef, useState, type Ref } from 'react';
import { api, ApiError, messageOf, type RecordingLink } from '../api';
import { ErrorAlert } from './error-alert';

/** How long each link lives; a link that has expired by the time the player needs it is replaced when the audio errors. */
const LINK_TTL_S = 300;
/** While the recording is being stored (just after the call ends), the link is asked for this often... */
const STORING_POLL_MS = 2_000;
/** ...for at most this long; then a Retry button asks again. */
const STORING_POLL_LIMIT_MS = 30_000;

type Shown =
  | { state: 'live' }
  | { state: 'loading' }
  | { state: 'not_recorded' }
  | { state: 'storing'; polling: boolean }
  | { state: 'failed' }
  | { state: 'deleted' }
  | { state: 'error'; message: string }
  | { state: 'available'; link: RecordingLink };

/** What the page can ask of the player. */
export interface RecordingPlayerHandle {
  /** Moves the playhead to a moment on the call's timeline (ms since the call's startedAt). */
  seekTo(callMs: number): void;
}

/** What the link route's refusal means for the player. */
function shownFor(caught: unknown): Shown {
  if (caught instanceof ApiError) {
    switch (caught.code) {
      case 'recording_not_found':
        return { state: 'not_recorded' };
      case 'recording_in_progress':
        return { state: 'storing', polling: true };
      case 'recording_failed':
        return { state: 'failed' };
      case 'recording_deleted':
        return { state: 'deleted' };
    }
  }
  return { state: 'error', message: messageOf(caught) };
}

/**
 * The link is absolute on PUBLIC_BASE_URL (perhaps a tunnel's host), but the console's CSP lets
 * media load from its own origin only, and the server that serves the console serves the link's
 * path too: play it as a same-origin path.
 */
function sameOriginPath(url: string): string {
  const parsed = new URL(url, window.location.href);
  return parsed.pathname + parsed.search;
}

function durationInWords(durationMs: number | null): string {
  if (durationMs === null) return 'length unknown';
  const seconds = Math.round(durationMs / 1000);
  if (seconds < 60) return `${(durationMs / 1000).toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function channelsInWords(channels: RecordingLink['recording']['channels']): string {
  return channels === 'dual' ? 'stereo: caller left, agent right' : 'mono: caller and agent mixed';
}

/**
 * A call's recording, once the call has ended: an audio player on a short-lived signed link (asked
 * for again when the audio errors, as the link may have expired), its length and channel layout,
 * and for admin keys a Delete button. Reports the playhead on the call's timeline as the audio plays
 * or is seeked (null while there is nothing to play), so the page can mark the turn being heard.
 */
export function RecordingPlayer({
  apiKey,
  callId,
  ended,
  writable,
  onPlayhead,
  ref,
}: {
  apiKey: string;
  callId: string;
  /** The call has ended: before that there is no recording to play. */
  ended: boolean;
  /** Admin key: may delete the recording. */
  writable: boolean;
  onPlayhead(callMs: number | null): void;
  ref?: Ref<RecordingPlayerHandle>;
}) {
  const [shown, setShown] = useState<Shown>({ state: 'loading' });
  /** Bumped by Retry: asks for the link again. */
  const [attempt, setAttempt] = useState(0);
  const [problem, setProblem] = useState<string>();
  const audio = useRef<HTMLAudioElement>(null);
  /** The link was replaced after an audio error and has not loaded since: a second error is shown, not retried. */
  const refreshedAfterError = useRef(false);
  /** Where the playhead was when the link was replaced, to go on from there. */
  const resumeAtS = useRef<number | undefined>(undefined);

  const fetchLink = useCallback(
    () => api<RecordingLink>(`/v1/calls/${encodeURIComponent(callId)}/recording/link?expiresInS=${LINK_TTL_S}`, { key: apiKey }),
    [apiKey, callId],
  );

  useEffect(() => {
    if (!ended) return undefined;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const pollingSince = Date.now();
    const ask = async () => {
      try {
        const link = await fetchLink();
        if (!stopped) setShown({ state: 'available', link });
      } catch (caught) {
        if (stopped) return;
        const next = shownFor(caught);
        if (next.state === 'storing' && Date.now() - pollingSince < STORING_POLL_LIMIT_MS) {
          timer = setTimeout(() => void ask(), STORING_POLL_MS);
          setShown(next);
        } else {
          setShown(next.state === 'storing' ? { state: 'storing', polling: false } : next);
        }
      }
    };
    void ask();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [ended, fetchLink, attempt]);

  const offsetMs = shown.state === 'available' ? shown.link.recording.startedOffsetMs : 0;
  const available = shown.state === 'available';
  // When there is nothing to play any more (deleted, or this player is gone), no turn is being heard.
  useEffect(() => {
    if (!available) return undefined;
    return () => onPlayhead(null);
  }, [available, onPlayhead]);

  useImperativeHandle(
    ref,
    () => ({
      seekTo(callMs: number) {
        if (audio.current) audio.current.currentTime = Math.max(0, (callMs - offsetMs) / 1000);
      },
    }),
    [offsetMs],
  );

  const reportPlayhead = () => {
    if (audio.current) onPlayhead(audio.current.currentTime * 1000 + offsetMs);
  };

  const loaded = () => {
    refreshedAfterError.current = false;
    if (audio.current && resumeAtS.current !== undefined) audio.current.currentTime = resumeAtS.current;
    resumeAtS.current = undefined;
    reportPlayhead();
  };

  // The link may have expired (a seek after a long pause asks the server for another range): ask
  // for a fresh one, once; if that does not play either, say so.
  const audioFailed = async () => {
    if (refreshedAfterError.current) {
      setProblem('The recording could not be played. Reload the page to try again.');
      return;
    }
    refreshedAfterError.current = true;
    resumeAtS.current = audio.current?.currentTime;
    try {
      setShown({ state: 'available', link: await fetchLink() });
    } catch (caught) {
      setShown(shownFor(caught));
    }
  };

  const remove = async () => {
    if (!window.confirm('Delete this recording? The audio file is removed for good; the call keeps a note that it was recorded.')) return;
    try {
      await api(`/v1/calls/${encodeURIComponent(callId)}/recording`, { key: apiKey, method: 'DELETE' });
      setProblem(undefined);
      setShown({ state: 'deleted' });
    } catch (caught) {
      const next = shownFor(caught);
      if (next.state === 'error') setProblem(next.message);
      else setShown(next);
    }
  };

  const view: Shown = ended ? shown : { state: 'live' };
  return (
    <section className="recording" data-testid="recording">
      <h2>Recording</h2>
      <ErrorAlert message={problem} />
      {view.state === 'live' && <p className="empty">The call is live: a recording (if this agent records) can be played when it ends.</p>}
      {view.state === 'loading' && <p className="empty">Loading…</p>}
      {view.state === 'not_recorded' && (
        <p className="empty" data-testid="recording-state">
          Not recorded (recording is off in this agent&apos;s config)
        </p>
      )}
      {view.state === 'storing' && (
        <p className="empty" data-testid="recording-state">
          Recording is being stored…{' '}
          {!view.polling && (
            <button type="button" className="small" onClick={() => setAttempt((count) => count + 1)}>
              Retry
            </button>
          )}
        </p>
      )}
      {view.state === 'failed' && (
        <p className="error" data-testid="recording-state">
          The recording could not be stored (the server log says why).
        </p>
      )}
      {view.state === 'deleted' && (
        <p className="empty" data-testid="recording-state">
          The recording was deleted.
        </p>
      )}
      {view.state === 'error' && <ErrorAlert message={view.message} />}
      {view.state === 'available' && (
        <div className="recording-player">
          <audio
            ref={audio}
            controls
            preload="metadata"
            src={sameOriginPath(view.link.url)}
            data-testid="recording-audio"
            onLoadedMetadata={loaded}
            onTimeUpdate={reportPlayhead}
            onSeeked={reportPlayhead}
            onError={() => void audioFailed()}
          />
          <p className="hint" data-testid="recording-facts">
            {durationInWords(view.link.recording.durationMs)}, {channelsInWords(view.link.recording.channels)}. Click a turn of the transcript to jump to it.
          </p>
          {writable && (
            <button type="button" className="danger" onClick={() => void remove()}>
              Delete recording
            </button>
          )}
        </div>
      )}
    </section>
  );
}
