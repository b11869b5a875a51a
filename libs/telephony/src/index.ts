export * from './telephony-error';
export {
  MAX_INBOUND_MESSAGE_CHARS,
  inboundMessageSchemas,
  parseInboundMessage,
  type ConnectedMessage,
  type DtmfMessage,
  type InboundEvent,
  type InboundMessage,
  type InboundParseError,
  type InboundParseErrorCode,
  type InboundParseResult,
  type MarkMessage,
  type MediaFormat,
  type MediaMessage,
  type StartMessage,
  type StopMessage,
} from './messages/inbound-messages';
export * from './messages/media-payload';
export * from './messages/outbound-messages';
export * from './session/media-stream-events';
export { MediaStreamSession, type MediaStreamSessionOptions } from './session/media-stream-session';
export type { OutboundAudioObserver } from './session/media-stream-outbound';
export { OutstandingMarks, type ResolvedMark } from './session/outstanding-marks';
export { OutboundFrames, type OutboundFrameSink } from './session/outbound-frames';
export { DEFAULT_OUTBOUND_LEAD_MS, OutboundPacer, type OutboundPacingOptions } from './session/outbound-pacer';
export { PacingTicker, type PacedSender } from './session/pacing-ticker';
export * from './twiml';
export * from './public-urls';
export * from './twilio-signature';
export * from './stream-token';
export * from './status-callback';
export * from './amd-callback';
