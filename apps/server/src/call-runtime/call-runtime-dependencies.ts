import type { MeasuredAiUsage, MeasuredCallUsage } from '@switchboard/billing';
import type { AgentEngine, CallControl, ConversationRecorder, ResumedCall } from '@switchboard/conversation';
import type { StreamAccount, StreamCallContext, StreamClaim } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';
import type { RecordingStart } from '../recordings/call-recording.service';
import type { LiveCallRecording } from '../recordings/live-call-recording';
import type { ConnectionCallEnd } from './call-end-reason';
import type { CallRuntime } from './call-runtime';
import type { CallEventBuffer } from './records/call-event-buffer';

/** What a call's runtime needs from the server, whatever carries the call; provided by CallRuntimes. */
export interface CallRuntimeDependencies {
  /** Spends the stream token, if the call belongs to the account that opened the socket (one atomic statement). */
  claimStream(input: { callId: string; tokenHash: string; streamSid: string; now: Date; account: StreamAccount }): Promise<StreamClaim>;
  /** Stores the call's end, retrying while the database is unavailable; resolves once stored (never rejects). */
  finaliseCall(callId: string, end: ConnectionCallEnd): Promise<void>;
  resolveAgent(engine: string): AgentEngine | undefined;
  createEventBuffer(callId: string): CallEventBuffer;
  /** Where the agent's transcript, tool calls and latency go; flushed before the call is finalised. */
  createRecorder(callId: string, events: CallEventBuffer): ConversationRecorder;
  /** Hang-up and transfers for this call, as its carrier allows them. */
  createCallControl(call: StreamCallContext, runtime: CallRuntime): CallControl;
  /** The conversation so far, for a stream that takes the call back after warm transfer `transferId` failed. */
  resumedCall?(callId: string, transferId: string): Promise<ResumedCall | undefined>;
  /** What an earlier stream of this call measured before a warm transfer held it (this process only). */
  takeCarriedUsage?(callId: string): MeasuredCallUsage | undefined;
  /** Starts the call's recording when its agent config asks for one (undefined: not recorded). */
  startRecording?(start: RecordingStart): LiveCallRecording | undefined;
  /** The call's AI usage meter (STT, TTS, LLM, realtime tokens, inference time), opened at start, read at the end. */
  usage: { open(callId: string): unknown; close(callId: string): MeasuredAiUsage };
  logger: PinoLogger;
  onClosed(runtime: CallRuntime): void;
  /** Frames and key presses held while the token is checked (default MAX_INPUT_HELD_BEFORE_AUTH); tests lower it. */
  maxInputHeldBeforeAuth?: number;
}
