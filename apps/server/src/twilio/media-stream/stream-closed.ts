import type { MediaStreamCounters } from '@switchboard/telephony';
import type { CarriedAudioMs } from '../../call-runtime/close-call-records';

/** G.711 at 8 kHz: one byte per sample, 8 bytes per millisecond. */
const MULAW_BYTES_PER_MS = 8;

/** The `stream_closed` event: the stream's media counters (marks are counted, not stored one row each). */
export function streamClosedPayload(
  reason: string,
  counters: MediaStreamCounters,
  stream: { openedAt: number; firstResponseMs: number | null; marksCleared: number },
): Record<string, unknown> {
  return {
    reason,
    durationMs: Date.now() - stream.openedAt,
    firstResponseMs: stream.firstResponseMs,
    mediaFramesIn: counters.mediaFramesIn,
    mediaFramesOut: counters.mediaFramesOut,
    marksSent: counters.marksSent,
    marksEchoed: counters.marksEchoed,
    marksCleared: stream.marksCleared,
    // How far the caller heard the agent: outbound audio up to the last mark echoed as played.
    heardMs: Math.round(counters.mediaBytesHeard / MULAW_BYTES_PER_MS),
    protocolErrors: counters.protocolErrors,
  };
}

/** The audio the stream carried, for the cost ledger. */
export function carriedAudioOf(counters: MediaStreamCounters): CarriedAudioMs {
  return {
    callerAudioMs: Math.round(counters.mediaBytesIn / MULAW_BYTES_PER_MS),
    agentAudioSentMs: Math.round(counters.mediaBytesOut / MULAW_BYTES_PER_MS),
    agentAudioHeardMs: Math.round(counters.mediaBytesHeard / MULAW_BYTES_PER_MS),
  };
}
