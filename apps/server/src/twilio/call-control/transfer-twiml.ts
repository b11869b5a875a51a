import VoiceResponse from 'twilio/lib/twiml/VoiceResponse';

export const E164_NUMBER = /^\+[1-9]\d{6,14}$/;

/**
 * `<Response><Dial>+1...</Dial></Response>`: what a cold transfer replaces the call's TwiML with.
 * Built with twilio's own TwiML builder (as libs/telephony/src/twiml.ts does), so the number is
 * escaped; it is also checked to be E.164 first, so nothing but a number can get into the TwiML.
 */
export function transferTwiml(to: string): string {
  if (!E164_NUMBER.test(to)) throw new Error(`transfer destination must be an E.164 number (+ and 7 to 15 digits)`);
  const response = new VoiceResponse();
  response.dial(to);
  return response.toString();
}

/** `<Response><Say>message</Say><Hangup/></Response>`, the message escaped by twilio's builder. */
export function sayAndHangUpTwiml(message: string): string {
  const response = new VoiceResponse();
  response.say(message);
  response.hangup();
  return response.toString();
}
