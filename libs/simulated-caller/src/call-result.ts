import { decodeMulaw } from '@switchboard/audio';
import { LatencySummary } from './call-latency';
import { UtteranceTiming } from './inbound-line';
import { MarkEcho } from './playback-buffer';
import { ParsedTwiml } from './twiml-parser';
import { CallParties } from './twilio-webhook-params';

/** Everything one simulated call observed; audio is 8 kHz. */
export interface CallResult {
  callSid: string;
  accountSid: string;
  streamSid: string;
  /** The voice webhook turned the call away (no <Connect><Stream>); see sayText. */
  rejected: boolean;
  sayText: string;
  twiml: ParsedTwiml | null;
  /** What the caller heard, on the call's timeline (silence where nothing played, cleared audio cut). */
  played: Int16Array;
  /** Every outbound media payload in arrival order, cleared audio included. */
  received: Int16Array;
  playedMulaw: Uint8Array;
  receivedMulaw: Uint8Array;
  /** Every caller frame sent on the media socket, in order (idle silence included). */
  sentMulaw: Uint8Array;
  /** Mark echoes in the order they were sent back. */
  marksEchoed: MarkEcho[];
  utterances: UtteranceTiming[];
  /** Server messages Twilio would not accept, in order; empty for a well-behaved server. */
  protocolErrors: string[];
  /** null when no media socket was opened (e.g. a rejected call). */
  closeCode: number | null;
  closeReason: string | null;
  closedBy: 'caller' | 'server' | null;
  latency: LatencySummary;
}

export interface CallResultParts {
  parties: CallParties;
  streamSid: string;
  twiml: ParsedTwiml | null;
  playedMulaw: Uint8Array;
  receivedMulaw: Uint8Array;
  sentMulaw: Uint8Array;
  marksEchoed: MarkEcho[];
  utterances: UtteranceTiming[];
  protocolErrors: string[];
  close: { code: number; reason: string; closedBy: 'caller' | 'server' } | null;
  latency: LatencySummary;
}

export function buildCallResult(parts: CallResultParts): CallResult {
  return {
    callSid: parts.parties.callSid,
    accountSid: parts.parties.accountSid,
    streamSid: parts.streamSid,
    rejected: parts.twiml?.rejected ?? false,
    sayText: parts.twiml?.sayText ?? '',
    twiml: parts.twiml,
    played: decodeMulaw(parts.playedMulaw),
    received: decodeMulaw(parts.receivedMulaw),
    playedMulaw: parts.playedMulaw,
    receivedMulaw: parts.receivedMulaw,
    sentMulaw: parts.sentMulaw,
    marksEchoed: parts.marksEchoed,
    utterances: parts.utterances,
    protocolErrors: parts.protocolErrors,
    closeCode: parts.close?.code ?? null,
    closeReason: parts.close?.reason ?? null,
    closedBy: parts.close?.closedBy ?? null,
    latency: parts.latency,
  };
}
