import { ConflictException, Controller, HttpCode, HttpStatus, Param, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiTags } from '@nestjs/swagger';
import { AgentRepository, CallAnalysisRepository, CallRepository, type InputJsonValue } from '@switchboard/persistence';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { callNotFound } from '../calls/outbound-call-errors';
import { ApiErrors, ApiKeyAuthenticated, createApiDto } from '../openapi/api-schemas';

const queuedSchema = z.strictObject({ callId: z.string(), status: z.literal('pending').describe('The analysis is queued; GET /v1/calls/{id} shows it when done, and call.analyzed is sent.') });
class AnalysisQueuedDto extends createApiDto(queuedSchema) {}

/** Re-runs a call's post-call analysis with its agent's current analysis settings. */
@ApiTags('Calls')
@ApiKeyAuthenticated()
@Controller('v1/calls/:id/analysis')
@UseGuards(ApiKeyGuard)
export class CallAnalysisController {
  constructor(
    private readonly calls: CallRepository,
    private readonly agents: AgentRepository,
    private readonly analyses: CallAnalysisRepository,
  ) {}

  @Post()
  @RequireScope('admin')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({ type: AnalysisQueuedDto, description: "Queued with the agent's current `analysis` settings (a changed prompt or schema applies); its tokens are charged again." })
  @ApiErrors(403, 404, 409)
  async rerun(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(z.guid({ message: 'must be a call id (UUID)' }))) callId: string): Promise<z.infer<typeof queuedSchema>> {
    const call = await this.calls.findById(callId);
    if (!call || call.organizationId !== principal.organizationId) throw callNotFound(callId);
    if (call.endedAt === null && call.endReason === null) throw conflict('call_in_progress', 'The call has not ended yet; its analysis runs when it does.');
    const current = call.agentId ? await this.agents.currentConfig(call.agentId) : null;
    const config = objectOf(current?.config);
    const analysis = objectOf(config?.['analysis']);
    if (analysis?.['enabled'] !== true) throw conflict('analysis_not_configured', "The call's agent does not have analysis.enabled in its config; enable it (PATCH /v1/agents/{id}) and try again.");
    // The job is self-contained: the analysis settings with the agent's own llm when they name none.
    const job = { ...analysis, llm: analysis['llm'] ?? config?.['llm'] ?? {} } as InputJsonValue;
    if ((await this.analyses.rerun(principal.organizationId, callId, job)) === 'running') {
      throw conflict('analysis_running', 'The analysis is running now; try again when it has finished.');
    }
    return { callId, status: 'pending' };
  }
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function conflict(code: string, message: string): ConflictException {
  return new ConflictException({ statusCode: 409, error: 'Conflict', code, message });
}
