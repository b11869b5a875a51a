import { ConflictException, Injectable } from '@nestjs/common';
import { AgentRepository, CallAnalysisRepository, CallRepository, type InputJsonValue } from '@switchboard/persistence';
import { callNotFound } from '../calls/outbound-call-errors';

/**
 * Queues a call's post-call analysis again with its agent's current analysis settings (a changed
 * prompt or schema applies; its tokens are charged again). Refusals are the API's errors: 404 for
 * another organization's call or none, 409 while the call or its analysis is still running or when
 * the agent has no analysis configured.
 */
@Injectable()
export class CallAnalysisRerunService {
  constructor(
    private readonly calls: CallRepository,
    private readonly agents: AgentRepository,
    private readonly analyses: CallAnalysisRepository,
  ) {}

  async rerun(organizationId: string, callId: string): Promise<void> {
    const call = await this.calls.findById(callId);
    if (!call || call.organizationId !== organizationId) throw callNotFound(callId);
    if (call.endedAt === null && call.endReason === null) throw conflict('call_in_progress', 'The call has not ended yet; its analysis runs when it does.');
    const current = call.agentId ? await this.agents.currentConfig(call.agentId) : null;
    const config = objectOf(current?.config);
    const analysis = objectOf(config?.['analysis']);
    if (analysis?.['enabled'] !== true) throw conflict('analysis_not_configured', "The call's agent does not have analysis.enabled in its config; enable it (PATCH /v1/agents/{id}) and try again.");
    // The job is self-contained: the analysis settings with the agent's own llm when they name none.
    const job = { ...analysis, llm: analysis['llm'] ?? config?.['llm'] ?? {} } as InputJsonValue;
    if ((await this.analyses.rerun(organizationId, callId, job)) === 'running') {
      throw conflict('analysis_running', 'The analysis is running now; try again when it has finished.');
    }
  }
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function conflict(code: string, message: string): ConflictException {
  return new ConflictException({ statusCode: 409, error: 'Conflict', code, message });
}
