/**
 * @switchboard/simulated-caller: a caller that dials the server exactly as Twilio would (signed
 * voice webhook, TwiML, the media stream socket, status callbacks). It ships with `npm run call`
 * and drives the end-to-end specs. Written from Twilio's protocol description, it does not import
 * `libs/telephony`, so a protocol bug in the server's own library cannot hide on both sides.
 */
export { AUDIBLE_LEVEL, lastAudibleIndex } from './audible-mulaw';
export { CallLatencyTracker, type LatencySummary, type TurnLatency } from './call-latency';
export type { CallResult } from './call-result';
export { FRAME_BYTES, FRAME_DURATION_MS, type DtmfPress, type UtteranceOptions, type UtteranceTiming } from './inbound-line';
export { localMediaUrl } from './media-url';
export { PacedSender, systemScheduler, type PacedSenderOptions, type PacedTick, type TimerScheduler } from './paced-sender';
export { placeCall, type PlaceCallOptions, type PlacedCallResult } from './place-call';
export { MULAW_BYTES_PER_MS, PlaybackBuffer, type MarkEcho, type MarkEchoReason } from './playback-buffer';
export {
  DEFAULT_REPLY_TAIL_MS,
  DEFAULT_REPLY_TIMEOUT_MS,
  waitForReplyEnd,
  type ReplyWaitOptions,
  type ReplyWaitResult,
  type ReplyWatchTarget,
} from './reply-wait';
export { SimulatedTwilioCall } from './simulated-call';
export type {
  CloseInfo,
  ConnectMediaOptions,
  SimulatedTwilioCallEvents,
  SimulatedTwilioCallOptions,
} from './simulated-call.options';
export { parseTwiml, type ParsedTwiml, type TwimlStream, type TwimlVerb } from './twiml-parser';
export { TwilioCallerError, type TwilioCallerErrorCode } from './twilio-caller.error';
export { computeTwilioSignature, signatureHeaderFor, type SignatureMode } from './twilio-signature';
export { newSid } from './twilio-sid';
export { parseServerMessage, type ServerStreamMessage } from './twilio-stream-messages';
export {
  statusCallbackParams,
  voiceWebhookParams,
  type CallParties,
  type CallStatus,
} from './twilio-webhook-params';
export { waitForEvent } from './wait-for-event';
export { childElements, parseXml, textContent, type XmlElement } from './xml-reader';
