import { Body, Controller, HttpCode, HttpStatus, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { agentIdParam } from '../agents-api/agent-requests.schema';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { budgetExceeded, capacityReached, concurrencyLimitReached } from '../calls/outbound-call-errors';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto, isoDateTime, uuid } from '../openapi/api-schemas';
import { WEB_CALL_AUDIO } from './web-call-protocol';
import { WebCallService } from './web-call.service';

const createWebCallBody = z.strictObject({
  variables: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), z.string().max(1000))
    .refine((variables) => Object.keys(variables).length <= 32, { message: 'At most 32 variables.' })
    .default({})
    .describe('Per-call variables; the agent sees them as {{call.params.NAME}}.'),
});
class CreateWebCallBodyDto extends createApiDto(createWebCallBody) {}

class WebCallDto extends createApiDto(
  z.strictObject({
    callId: uuid,
    token: z.string().describe('One-time: the socket\'s first message presents it ({"type":"start","callId","token"}).'),
    expiresAt: isoDateTime.describe('Connect before this; the call is ended by the reconciler otherwise.'),
    url: z.string().describe('The WebSocket to open (wss:// behind TLS).'),
    audio: z.strictObject({ encoding: z.literal('pcm_s16le'), sampleRate: z.literal(16_000), channels: z.literal(1), frameMs: z.literal(20) }),
  }),
) {}

/**
 * Talk to an agent from the browser: a call record admitted like a phone call (the organization's
 * concurrency limit and hard budget apply) and a short-lived token for its socket. `admin` scope: a
 * call spends money.
 */
@ApiTags('Web calls')
@ApiKeyAuthenticated()
@Controller('v1/agents')
@UseGuards(ApiKeyGuard)
export class WebCallsController {
  constructor(private readonly webCalls: WebCallService) {}

  @Post(':id/web-calls')
  @RequireScope('admin')
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({ type: WebCallDto })
  @ApiErrors(400, 402, 403, 404, 409, 503)
  async create(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(agentIdParam)) agentId: string,
    @Body(new ZodValidationPipe(createWebCallBody)) body: CreateWebCallBodyDto,
  ) {
    const outcome = await this.webCalls.create(principal.organizationId, agentId, body.variables ?? {});
    if (!outcome.admitted) {
      if (outcome.refusal.reason === 'budget_exceeded') throw budgetExceeded(outcome.refusal.budget);
      if (outcome.refusal.reason === 'capacity') throw capacityReached(outcome.refusal.capacity);
      throw concurrencyLimitReached(outcome.refusal.snapshot);
    }
    return { callId: outcome.callId, token: outcome.token, expiresAt: outcome.expiresAt.toISOString(), url: outcome.url, audio: WEB_CALL_AUDIO };
  }
}
