import type { SpeechToSpeechToolCallEvent } from '@switchboard/inference';
import type { AgentCallContext } from '../agent/agent-session';
import { CallClock } from '../call/call-clock';
import { SLOW_TOOL_FILLER_AFTER_MS } from '../pipeline/assistant-reply';
import type { ToolOutcome, ToolRunner } from '../tools/tool-contracts';
import { parseJsonOrRaw } from '../records/event-payloads';

/**
 * Runs the tools a realtime model calls and records each invocation. A tool that names a filler
 * line and is still running after SLOW_TOOL_FILLER_AFTER_MS gets `onSlow` (the session decides
 * whether the line can be said), so the caller is not left in silence, as with the pipeline agent.
 */
export class RealtimeToolCalls {
  private readonly running = new Set<AbortController>();

  constructor(
    private readonly deps: {
      tools: ToolRunner;
      context: AgentCallContext;
      clock: CallClock;
      onSlow(filler: string, toolName: string): void;
    },
  ) {}

  get inFlight(): boolean {
    return this.running.size > 0;
  }

  /** Never rejects for the tool's own failure: that becomes an outcome the model is told about. */
  async run(event: SpeechToSpeechToolCallEvent): Promise<ToolOutcome> {
    const { tools, context, clock } = this.deps;
    const startedAtMs = clock.nowMs();
    const controller = new AbortController();
    this.running.add(controller);
    const filler = tools.fillerFor(event.name);
    const fillerTimer = filler === undefined ? undefined : setTimeout(() => this.deps.onSlow(filler, event.name), SLOW_TOOL_FILLER_AFTER_MS);
    let outcome: ToolOutcome;
    try {
      outcome = await tools.run(
        { id: event.callId, name: event.name, arguments: event.arguments },
        { callId: context.callId, organizationId: context.organizationId, agentId: context.agentId, callerNumber: context.callerNumber, signal: controller.signal },
      );
    } finally {
      clearTimeout(fillerTimer);
      this.running.delete(controller);
    }
    context.recorder.toolInvocation({
      toolCallId: event.callId,
      name: event.name,
      arguments: parseJsonOrRaw(event.arguments),
      result: outcome.result ?? null,
      error: outcome.error ?? null,
      startedAtMs: Math.round(startedAtMs),
      latencyMs: CallClock.round(clock.nowMs() - startedAtMs),
    });
    return outcome;
  }

  /** Nobody is left to hear a tool's answer: stop waiting for the business's endpoints. */
  abortAll(): void {
    for (const controller of this.running) controller.abort();
    this.running.clear();
  }
}
