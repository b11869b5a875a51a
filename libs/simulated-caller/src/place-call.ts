import { CallResult } from './call-result';
import { DtmfPress } from './inbound-line';
import { ReplyWaitOptions, ReplyWaitResult } from './reply-wait';
import { SimulatedTwilioCall } from './simulated-call';
import { TwilioCallerError } from './twilio-caller.error';
import type { SimulatedTwilioCallOptions } from './simulated-call.options';

export interface PlaceCallOptions extends SimulatedTwilioCallOptions {
  /** What the caller says: 8 kHz mu-law, no header. */
  audio: Uint8Array;
  /** Silence sent after the audio so the agent can answer before the caller hangs up (default 1500, unless `awaitReply`). */
  trailingSilenceMs?: number;
  /**
   * Instead of a fixed trailing silence: after the audio, listen (the line sending silence, as a
   * phone does) until the agent's reply has been heard to its end, bounded (see waitForReplyEnd).
   */
  awaitReply?: ReplyWaitOptions;
  /** Key presses, timed from the start of `audio`. */
  dtmf?: readonly DtmfPress[];
  /** Also POST signed status callbacks: `in-progress` at answer, `completed` at the end. */
  statusCallbacks?: boolean;
  /** Called once the media socket is up, e.g. to listen for events or inject frames. */
  onConnected?: (call: SimulatedTwilioCall) => void;
  /**
   * For a call to an echo (one frame back per frame sent): before hanging up, wait until every
   * frame sent has come back, for at most this many ms. Leave it out for an agent that does not
   * echo, or each hang-up waits the whole bound.
   */
  awaitEchoMs?: number;
}

/** A placed call's result, with how the wait for the agent's reply went (null without `awaitReply`, or when the call ended first). */
export type PlacedCallResult = CallResult & { replyWait: ReplyWaitResult | null };

/**
 * One whole inbound call: webhook, media stream, the caller's audio, hang-up. Resolves with what
 * was heard and the latency summary; a rejected call resolves with `rejected: true` rather than
 * throwing, because being turned away is a normal outcome tests assert on. Transport failures
 * (server down, non-2xx webhook, refused upgrade) throw TwilioCallerError.
 */
export async function placeCall(options: PlaceCallOptions): Promise<PlacedCallResult> {
  if (options.awaitReply && options.trailingSilenceMs !== undefined) {
    throw new TwilioCallerError('INVALID_ARGUMENT', 'Pass trailingSilenceMs or awaitReply, not both', { retryable: false });
  }
  const call = new SimulatedTwilioCall(options);
  const twiml = await call.dial();
  if (twiml.rejected) {
    if (options.statusCallbacks) await call.sendStatusCallback('completed');
    return { ...call.result(), replyWait: null };
  }
  if (options.statusCallbacks) await call.sendStatusCallback('in-progress');
  await call.connectMedia();
  let replyWait: ReplyWaitResult | null = null;
  try {
    options.onConnected?.(call);
    // Resolves early (completed: false) if the server ends the call first.
    const timing = await call.streamAudio(options.audio, {
      trailingSilenceMs: options.awaitReply ? 0 : (options.trailingSilenceMs ?? 1500),
      ...(options.dtmf ? { dtmf: options.dtmf } : {}),
    });
    if (options.awaitReply && timing.completed) {
      // A recording with no audible audio: any audible audio after it started is the reply.
      replyWait = await call.waitForReplyEnd(timing.audibleEndedAtMs ?? timing.startedAtMs ?? 0, options.awaitReply);
    }
  } finally {
    await call.hangup({ awaitEchoMs: options.awaitEchoMs });
  }
  if (options.statusCallbacks) await call.sendStatusCallback('completed');
  return { ...call.result(), replyWait };
}
