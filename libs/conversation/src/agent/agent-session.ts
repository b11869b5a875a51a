import type { CallControl } from '../call/call-control';
import type { ConversationRecorder } from '../records/conversation-records';

/**
 * The contract between the call edge and an agent. It knows nothing of the carrier: audio is PCM16 mono
 * at the agent's own sample rates, and the edge does the codec, resampling and framing both ways;
 * or, for an agent that declares it (AgentDescriptor encodings), G.711 mu-law at 8 kHz, passed
 * through untouched in that direction.
 */
export interface AgentSession {
  /**
   * Caller audio as PCM16 at `AgentDescriptor.inputSampleRate`, in arrival order, continuous
   * (silence included). Required unless the agent takes mu-law. The array is reused by the edge for
   * the next frame: copy what you keep.
   */
  pushAudio?(pcm: Int16Array): void;
  /**
   * Caller audio as the mu-law bytes the caller sent (8 kHz), for agents whose `inputEncoding` is
   * 'mulaw'. A view into a buffer the edge reuses for the next frame: copy what you keep.
   */
  pushMulaw?(mulaw: Uint8Array): void;
  /** A key the caller pressed: 0-9, *, #, A-D. */
  onDtmf(digit: string): void;
  /**
   * A mark the agent placed came back. `cleared` is true when it was echoed because the playback
   * buffer was cleared (the audio before it was discarded, not played).
   */
  onMarkEchoed(name: string, cleared: boolean): void;
  /**
   * The carrier's answering-machine verdict reached the live agent (context.answeredBy already holds
   * it). Agents that leave voicemails act on it; the others read the field when they need it.
   */
  onAnsweredBy?(answeredBy: string): void;
  /** The call is over (for `reason`); release everything. Never throws. */
  close(reason: string): void;
}

/**
 * How the agent speaks. The edge turns this into whole 20 ms frames on the wire: audio that does not
 * fill a frame waits for the next chunk, so chunks of any size play back to back with nothing
 * inserted between them. Marks never cause padding; endOfUtterance() does.
 */
export interface AgentAudioOutput {
  /** Queue agent audio (PCM16 at `AgentDescriptor.outputSampleRate`) for playback, after what is queued. Copied before it returns. */
  play(pcm: Int16Array): void;
  /** Queue agent audio as mu-law 8 kHz bytes, untouched; only for agents whose `outputEncoding` is 'mulaw'. Copied before it returns. */
  playMulaw(mulaw: Uint8Array): void;
  /**
   * Ask to be told (onMarkEchoed) when everything queued so far has been played. Exact to the byte:
   * the edge sends it on the next frame boundary but counts it at this position.
   */
  mark(name: string): void;
  /**
   * The agent is done speaking for now (the end of a reply, a line, a response): what is left goes
   * out, its last frame padded with silence, and marks waiting for that frame with it. Call it
   * wherever speech really ends, or the last few milliseconds and the marks placed in them wait for
   * the next utterance. Nothing to do when nothing is pending.
   */
  endOfUtterance(): void;
  /**
   * Throw away everything queued but not yet played (barge-in). Every mark not yet echoed comes
   * back as cleared, also those the edge had not sent yet, in the order they were placed.
   */
  clear(): void;
}

/** PCM16 (the default): the edge decodes, resamples and encodes. 'mulaw': the phone call's own bytes pass through untouched (8 kHz only). */
export type AgentAudioEncoding = 'pcm16' | 'mulaw';

export interface AgentDescriptor {
  inputSampleRate: number;
  outputSampleRate: number;
  /** How caller audio reaches the agent: pushAudio (PCM16, default) or pushMulaw ('mulaw', inputSampleRate 8000). */
  inputEncoding?: AgentAudioEncoding;
  /** How the agent speaks: play (PCM16, default) or playMulaw ('mulaw', outputSampleRate 8000). */
  outputEncoding?: AgentAudioEncoding;
}

/** Which call an agent session serves, and the agent configuration version it started with. */
export interface AgentCallContext {
  callId: string;
  organizationId: string;
  agentId: string;
  agentConfigVersion: number;
  /** The stored config of that version (validated by the engine that runs it). */
  config: unknown;
  /**
   * The call's parameters: an outbound call's variables (POST /v1/calls) overlaid by the custom
   * parameters the carrier passed when the media stream started (minus secrets), which win a clash.
   */
  streamParameters: Record<string, string>;
  /**
   * The carrier's answering-machine verdict (human, machine_start, fax, unknown, ...) for an outbound call
   * placed with machine detection; null until known. Asynchronous detection may decide after the
   * agent started: the edge then updates this field in place, so read it when it matters rather than
   * copying it at start (prompts rendered at start see the value known then).
   */
  answeredBy?: string | null;
  /**
   * The voicemail this call leaves when a machine answers (`machine_end_*`): the call's own from
   * POST /v1/calls, else its agent's default, fixed when the call was placed (only for calls placed
   * with DetectMessageEnd). Null or absent: the agent converses whoever answers.
   */
  voicemailMessage?: string | null;
  /**
   * Set when this media stream takes a call back after a warm transfer nobody answered: the agent
   * says so (instead of its first message) and goes on from the conversation so far.
   */
  resumed?: ResumedCall;
  /** inbound, outbound or web: for the server's metrics and traces (absent where an edge does not say). */
  direction?: string;
  /** The caller's number (E.164) and the number they dialled, as the carrier reported them. */
  callerNumber: string;
  calledNumber: string;
  /** calls.started_at: the origin of every offset the agent records. */
  callStartedAt: Date;
  /** Where transcript turns, tool invocations and latency waterfalls go. */
  recorder: ConversationRecorder;
  /** Hang up / transfer the phone call. */
  callControl: CallControl;
  /**
   * The agent ended the call itself (goodbye said, transfer placed, idle, max duration): the edge
   * closes the media stream and records `reason` as the call's end reason.
   */
  endCall(reason: string): void;
}

/** A call an agent takes back after a warm transfer failed (no answer, busy, or the carrier refused the dial). */
export interface ResumedCall {
  /** The destination that was tried, as configured (the agent finds its noAnswerMessage by it). */
  destination: string;
  /** The conversation's turns before the transfer (oldest first), so the agent goes on where it stopped. */
  priorTurns: { role: 'user' | 'assistant'; text: string }[];
  /** Transcript turns are numbered on from here (the earlier media stream recorded the ones before). */
  nextTranscriptIndex: number;
}

export interface AgentEngine {
  readonly name: string;
  /** The rates this engine usually runs at (the server prepares these resampling filters at boot). */
  readonly audio: AgentDescriptor;
  /** The rates for one call, when they depend on its config (e.g. the TTS voice's sample rate). */
  describeAudio?(context: AgentCallContext): AgentDescriptor;
  createSession(context: AgentCallContext, output: AgentAudioOutput): AgentSession;
}
