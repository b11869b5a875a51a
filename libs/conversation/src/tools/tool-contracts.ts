import type { ToolDefinition } from '@switchboard/inference';
import type { WarmTransferPlan } from '../call/call-control';

/** Who is asking a tool to run. Sent to webhook tools so the business can tie it to the call. */
export interface ToolCallContext {
  callId: string;
  organizationId: string;
  agentId: string;
  /** The caller's number (E.164) as the carrier reported it. */
  callerNumber: string;
  /** Aborted when the call ends or the caller barges in. */
  signal: AbortSignal;
}

/** What the runtime must do after a tool ran, beyond feeding the result to the model. */
export type ToolAction =
  | { type: 'none' }
  /** Say `goodbye` (unless the model already said its own), then hang up. */
  | { type: 'end_call'; goodbye: string }
  /** Say `message`, then transfer the call to `to` (cold, or warm when `warm` is set). */
  | { type: 'transfer'; to: string; message: string; warm?: WarmTransferPlan };

export interface ToolOutcome {
  /** Content of the `tool` message the model sees next: the result as JSON text, or a clear error. */
  content: string;
  /** The result on success (recorded); undefined on failure. */
  result?: unknown;
  /** Why it failed (recorded and fed back to the model); undefined on success. */
  error?: string;
  action: ToolAction;
}

export interface ToolInvocation {
  id: string;
  name: string;
  /** The raw JSON text the model produced (it may be invalid). */
  arguments: string;
}

/** A set of tools an agent can call: the definitions for the model, and the way to run one. */
export interface ToolRunner {
  readonly definitions: ToolDefinition[];
  /** Tools that may be slow (network calls) name the line to say while waiting, if any. */
  fillerFor(name: string): string | undefined;
  /** Never rejects: every failure becomes an outcome with `error`, so the model can react to it. */
  run(call: ToolInvocation, context: ToolCallContext): Promise<ToolOutcome>;
}
