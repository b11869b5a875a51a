/**
 * Twilio's CallStatus vocabulary, as stored on calls. Defined once, by the Twilio protocol lib;
 * re-exported here under the names the repositories use.
 */
export {
  CALL_STATUSES as TWILIO_CALL_STATUSES,
  TERMINAL_CALL_STATUSES,
  isCallStatus as isTwilioCallStatus,
  isTerminalCallStatus,
  type CallStatus as TwilioCallStatus,
} from '@switchboard/telephony';
