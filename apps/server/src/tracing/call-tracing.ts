import { OnApplicationShutdown } from '@nestjs/common';
import type { AgentCallContext } from '@switchboard/conversation';
import { CallTrace } from './call-trace';
import type { TracingRuntime } from './tracer-provider';

/**
 * The traces of the calls this process carries, by call id (engines are shared between calls and
 * find a call's trace by the id every request carries), and the tracer provider's lifetime: made
 * when the application is built (so a test server gets its own, never one left by a module
 * import), flushed and shut down when it closes, after the calls have ended (TracingModule).
 */
export class CallTracing implements OnApplicationShutdown {
  private readonly calls = new Map<string, CallTrace>();

  constructor(private readonly runtime: TracingRuntime | undefined) {}

  /** False without OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT: nothing is traced and nothing is wrapped. */
  get enabled(): boolean {
    return this.runtime !== undefined;
  }

  /** A call's stream started: its trace, until `end`. Undefined when tracing is off. */
  begin(context: AgentCallContext, engine: string): CallTrace | undefined {
    if (this.runtime === undefined) return undefined;
    const trace = new CallTrace(this.runtime.tracer, {
      callId: context.callId,
      organizationId: context.organizationId,
      agentId: context.agentId,
      agentConfigVersion: context.agentConfigVersion,
      engine,
      direction: context.direction,
      resumed: context.resumed !== undefined,
      callStartedAt: context.callStartedAt,
    });
    // A call taken back after a warm transfer gets a new stream, after the first one ended.
    this.calls.set(context.callId, trace);
    return trace;
  }

  find(callId: string): CallTrace | undefined {
    return this.calls.get(callId);
  }

  end(trace: CallTrace, reason: string): void {
    trace.end(reason);
    if (this.calls.get(trace.callId) === trace) this.calls.delete(trace.callId);
  }

  async onApplicationShutdown(): Promise<void> {
    // Calls still open here were not ended by their edge (it ends them first): end them all the same.
    for (const trace of [...this.calls.values()]) this.end(trace, 'server_shutdown');
    await this.runtime?.shutdown();
  }
}
