import type { CallControl } from '../call/call-control';
import type { ConversationRecorder } from '../records/conversation-records';

/**
 * The contract between the call edge and an agent. It knows nothing of Twilio: audio is PCM16 mono
 * at the agent's own sample rates, and the edge does the codec, resampling and framing both ways.
 */
export interface AgentSession {
  /** Caller audio at `AgentDescriptor.inputSampleRate`, in arrival order, continuous (silence included). */
  pushAudio(pcm: Int16Array): void;
  /** A key the caller pressed: 0-9, *, #, A-D. */
  onDtmf(digit: string): void;
  /**
   * A mark the agent placed came back. `cleared` is true when it was echoed because the playback
   * buffer was cleared (the audio before it was discarded, not played).
   */
  onMarkEchoed(name: string, cleared: boolean): void;
  /** The call is over (for `reason`); release everything. Never throws. */
  close(reason: string): void;
}

/** How the agent speaks. The edge turns this into frames on the wire. */
export interface AgentAudioOutput {
  /** Queue agent audio at `AgentDescriptor.outputSampleRate` for playback, after what is queued. */
  play(pcm: Int16Array): void;
  /** Ask to be told (onMarkEchoed) when everything queued so far has been played. */
  mark(name: string): void;
  /** Throw away everything queued but not yet played (barge-in). */
  clear(): void;
}

export interface AgentDescriptor {
  inputSampleRate: number;
  outputSampleRate: number;
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
   * parameters Twilio passed on `start` (the TwiML <Parameter>s, minus secrets), which win a clash.
   */
  streamParameters: Record<string, string>;
  /**
   * Twilio's answering-machine verdict (human, machine_start, fax, unknown, ...) for an outbound call
   * placed with machine detection; null until known. Asynchronous detection may decide after the
   * agent started: the edge then updates this field in place, so read it when it matters rather than
   * copying it at start (prompts rendered at start see the value known then).
   */
  answeredBy?: string | null;
  /** The caller's number (E.164) and the number they dialled, as Twilio reported them. */
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

export interface AgentEngine {
  readonly name: string;
  /** The rates this engine usually runs at (the server prepares these resampling filters at boot). */
  readonly audio: AgentDescriptor;
  /** The rates for one call, when they depend on its config (e.g. the TTS voice's sample rate). */
  describeAudio?(context: AgentCallContext): AgentDescriptor;
  createSession(context: AgentCallContext, output: AgentAudioOutput): AgentSession;
}
