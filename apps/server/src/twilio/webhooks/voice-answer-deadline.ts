import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { isRetryableDatabaseError } from '@switchboard/persistence';
import { rejectCallTwiml } from '@switchboard/telephony';
import type { Request, Response } from 'express';

/**
 * Twilio gives up on a voice webhook after 15 s and plays its own "application error". A call that
 * cannot be routed and recorded well before that (the database is overloaded or answers nothing)
 * is declined politely instead: the signature check and the admission both run against this one
 * deadline, counted from when the request arrived.
 */
export const VOICE_ANSWER_DEADLINE_MS = 8_000;

/** Said when the call cannot be recorded right now. */
export const TRY_AGAIN_MESSAGE = 'Sorry, we cannot take your call right now. Please try again in a few minutes. Goodbye.';

export class VoiceAnswerDeadlineExceeded extends Error {
  override readonly name = 'VoiceAnswerDeadlineExceeded';
}

const deadlines = new WeakMap<Request, number>();

/** The request's deadline (performance.now() ms), fixed the first time it is asked for. */
export function voiceDeadlineOf(request: Request): number {
  let at = deadlines.get(request);
  if (at === undefined) {
    at = performance.now() + VOICE_ANSWER_DEADLINE_MS;
    deadlines.set(request, at);
  }
  return at;
}

/**
 * `work`'s result, or VoiceAnswerDeadlineExceeded once `deadlineAt` passes or when the work fails for
 * an outage (no free connection, a dropped one): either way the caller is declined politely. The
 * work goes on (it cannot be cancelled) and whatever it stores later is harmless: an admitted call
 * whose stream never comes is ended by the reconciler and its token expires unused.
 */
export async function withinVoiceDeadline<T>(work: Promise<T>, deadlineAt: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new VoiceAnswerDeadlineExceeded('the voice webhook could not be answered in time')), Math.max(0, deadlineAt - performance.now()));
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expired]);
  } catch (error) {
    if (isRetryableDatabaseError(error)) throw new VoiceAnswerDeadlineExceeded('the database could not answer the voice webhook', { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Answers a voice webhook that ran out of time with the polite refusal (200, TwiML), never an error. */
@Catch(VoiceAnswerDeadlineExceeded)
export class VoiceAnswerDeadlineFilter implements ExceptionFilter {
  catch(_error: VoiceAnswerDeadlineExceeded, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) return;
    response.status(200).type('text/xml; charset=utf-8').send(rejectCallTwiml(TRY_AGAIN_MESSAGE));
  }
}
