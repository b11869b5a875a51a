import { Controller, HttpCode, HttpStatus, Param, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto } from '../openapi/api-schemas';
import { CallAnalysisRerunService } from './call-analysis-rerun.service';

const queuedSchema = z.strictObject({ callId: z.string(), status: z.literal('pending').describe('The analysis is queued; GET /v1/calls/{id} shows it when done, and call.analyzed is sent.') });
class AnalysisQueuedDto extends createApiDto(queuedSchema) {}

/** Re-runs a call's post-call analysis with its agent's current analysis settings. */
@ApiTags('Calls')
@ApiKeyAuthenticated()
@Controller('v1/calls/:id/analysis')
@UseGuards(ApiKeyGuard)
export class CallAnalysisController {
  constructor(private readonly analyses: CallAnalysisRerunService) {}

  @Post()
  @RequireScope('admin')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({ type: AnalysisQueuedDto, description: "Queued with the agent's current `analysis` settings (a changed prompt or schema applies); its tokens are charged again." })
  @ApiErrors(403, 404, 409)
  async rerun(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(z.guid({ message: 'must be a call id (UUID)' }))) callId: string): Promise<z.infer<typeof queuedSchema>> {
    await this.analyses.rerun(principal.organizationId, callId);
    return { callId, status: 'pending' };
  }
}
