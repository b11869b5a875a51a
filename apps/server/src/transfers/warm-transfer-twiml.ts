import VoiceResponse from 'twilio/lib/twiml/VoiceResponse';

/**
 * The TwiML of a warm transfer. Twilio semantics it relies on (Twilio's <Conference> docs):
 * - Replacing a call's TwiML ends its <Connect><Stream>: the agent's media stream stops (Twilio
 *   sends `stop` and closes the socket) and the caller runs the new TwiML. A call cannot stream to
 *   the agent and sit in a conference at once, so the agent leaves when the caller goes on hold,
 *   and comes back on a new stream if nobody answers.
 * - A participant with startConferenceOnEnter="false" waits, hearing waitUrl (Twilio's own hold
 *   music by default), until one with startConferenceOnEnter="true" joins: the destination. Its
 *   joining is what connects the two: no further request is needed to take the caller off hold.
 * - endConferenceOnExit="true" on both: when either hangs up, the other is not left alone.
 * - statusCallbackEvent "join leave" reports each participant (by CallSid) joining and leaving.
 */

/** The conference a call's warm transfer meets in: one per call, named after it. */
export function conferenceNameOf(callId: string): string {
  return `switchboard-${callId}`;
}

export interface HoldTwimlOptions {
  conferenceName: string;
  /** Played to the caller while waiting (an audio file is fetched with GET); Twilio's default music when absent. */
  holdMusicUrl?: string;
  statusCallbackUrl: string;
}

/** The caller's side: into the conference, on hold until the destination joins. */
export function holdTwiml(options: HoldTwimlOptions): string {
  const response = new VoiceResponse();
  response.dial().conference(
    {
      startConferenceOnEnter: false,
      endConferenceOnExit: true,
      beep: 'false',
      ...(options.holdMusicUrl !== undefined && { waitUrl: options.holdMusicUrl, waitMethod: 'GET' }),
      statusCallback: options.statusCallbackUrl,
      statusCallbackEvent: ['join', 'leave'],
      statusCallbackMethod: 'POST',
    },
    options.conferenceName,
  );
  return response.toString();
}

/**
 * The destination's side, fetched by Twilio when it answers: the whisper (Twilio <Say>: the
 * destination's leg has no media stream of ours, and a short note to a colleague needs no agent
 * voice, so Twilio's own speech avoids hosting synthesized audio), then into the conference, which
 * starts it and so connects the caller.
 */
export function whisperTwiml(whisper: string | null, conferenceName: string, statusCallbackUrl: string): string {
  const response = new VoiceResponse();
  if (whisper !== null && whisper.trim().length > 0) response.say(whisper);
  response.dial().conference(
    {
      startConferenceOnEnter: true,
      endConferenceOnExit: true,
      beep: 'false',
      statusCallback: statusCallbackUrl,
      statusCallbackEvent: ['join', 'leave'],
      statusCallbackMethod: 'POST',
    },
    conferenceName,
  );
  return response.toString();
}

/** The destination answered after the caller was already taken back (or had hung up). */
export function tooLateTwiml(): string {
  const response = new VoiceResponse();
  response.say('Sorry, the caller is no longer waiting. Goodbye.');
  response.hangup();
  return response.toString();
}
