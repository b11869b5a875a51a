import type { AgentAudioEncoding, AgentAudioOutput, AgentSession } from '@switchboard/conversation';
import type { StreamAccount } from '@switchboard/persistence';
import type { LiveCallRecording } from '../recordings/live-call-recording';
import type { CallEndReason } from './call-end-reason';
import type { CarriedAudioMs } from './close-call-records';

/**
 * A call carrier's edge (Twilio's media stream, the browser's web call): it parses and serialises
 * its protocol and owns its socket, nothing else. Everything about the call (authorisation, held
 * input, the agent, records, the end) is the CallRuntime's. A third carrier is one more of these.
 */
export interface CallTransport {
  /** How logs name this carrier's calls ("media stream", "web call"). */
  readonly name: string;
  /** Close codes this carrier's peer understands, for each way the runtime ends a call. */
  readonly closeCodes: TransportCloseCodes;
  /** The rate of the audio the recording hears on this carrier (both directions). */
  readonly recordingSampleRate: number;
  /** Starts carrying `call`: from now on what the peer sends reaches it (and the socket's close ends it). */
  connect(call: CallInbound): void;
  /** The agent's speech, in the agent's declared format, framed for this carrier. */
  agentOutput(format: { outputSampleRate: number; outputEncoding?: AgentAudioEncoding }): AgentAudioOutput;
  /** The caller's audio, from this carrier's frames to the agent; throws when the agent cannot take the format it declared. */
  callerInput(format: { inputSampleRate: number; inputEncoding?: AgentAudioEncoding }, agent: AgentSession): CallerAudioPath;
  /** The call was authorised and its agent runs. */
  started(callId: string): void;
  /** The token was refused: tell the peer why, where its protocol has words for it (the socket closes next). */
  refused(): void;
  /** A fatal error the runtime found (held input over its bound): tell the peer, where its protocol can. */
  tellError?(code: string, message: string): void;
  /** From now on the recording hears what this carrier sends to the caller. */
  recordOutbound(recording: LiveCallRecording): void;
  /** The call is over: nothing more is sent; `reason` (with the drain's `message`) is told where the protocol can, then the socket closes with `code`. */
  close(reason: CallEndReason | undefined, code: number, message: string | undefined): void;
  /** The `stream_closed` event of the call (the carrier's own counters). */
  streamClosedPayload(reason: string, timing: StreamTiming): Record<string, unknown>;
  /** The audio this carrier carried, for the cost ledger. */
  carriedAudio(): CarriedAudioMs;
}

export interface TransportCloseCodes {
  normal: number;
  /** The token was refused. */
  refused: number;
  serverError: number;
  /** The caller sent more than the runtime holds while the token is checked. */
  heldInputLimit: number;
}

/** When the call's stream opened and the caller's first audio arrived (monotonic, performance.now()). */
export interface StreamTiming {
  openedAt: number;
  firstCallerAudioAtMs: number | undefined;
}

/** The caller's audio on its way to the agent, one carrier frame at a time (the hot path: no allocation per frame). */
export interface CallerAudioPath {
  deliver(frame: Uint8Array): void;
  /** From now on the recording hears the caller too. */
  record(recording: LiveCallRecording): void;
}

/** What a carrier's `start` names: the call, its one-time token, and what to record about the stream. */
export interface CallStartRequest {
  callId: string | undefined;
  token: string | undefined;
  streamSid: string;
  /** Whose signature opened the socket: only that account's calls may stream on it. */
  account: StreamAccount;
  /** The `stream_started` event's payload. */
  streamStarted: Record<string, unknown>;
  /** Parameters the carrier passed with the start (our TwiML's), for the agent; they win a name clash with the call's variables. */
  customParameters: Record<string, string>;
  /** The warm transfer whose failure brings the call back to this stream, when our own TwiML says so. */
  resumeTransfer?: string;
  /** For logs: the carrier's own id of the call, when it has one. */
  carrierCallId?: string | null;
}

/** What a carrier tells the call's runtime (the runtime implements it). */
export interface CallInbound {
  start(request: CallStartRequest): void;
  callerAudio(frame: Uint8Array): void;
  keyPressed(digit: string): void;
  markEchoed(name: string, wasCleared: boolean): void;
  /** The caller (or the carrier for them) ended the stream. */
  hungUp(payload: Record<string, unknown>): void;
  /** The socket closed. */
  connectionLost(): void;
  /** Records a call event (held, bounded, until the call is known). */
  record(type: string, payload: Record<string, unknown>): void;
  /** Ends the call from the carrier's side (a fatal protocol error). */
  end(reason: CallEndReason, closeCode: number): Promise<void>;
  /** The call this carrier carries, once authorised (for logs). */
  readonly activeCallId: string | undefined;
}
