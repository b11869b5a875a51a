import { BadRequestException, Body, Controller, Get, NotFoundException, Patch, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { formatMicros } from '@switchboard/billing';
import type { OrganizationCallUsage } from '@switchboard/persistence';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { InferenceCapacityService } from '../inference/capacity/inference-capacity.service';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto, isoDateTime, uuid } from '../openapi/api-schemas';
import { OrganizationSettingsService } from './organization-settings.service';

const updateOrganizationBody = z
  .strictObject({
    /** null = use the deployment default (MAX_CONCURRENT_CALLS_PER_ORG); 0 refuses every call. */
    maxConcurrentCalls: z.number().int().min(0).max(100_000).nullable().optional(),
    /** Micro-units of the catalog currency per calendar month (UTC); null = no budget. */
    monthlyBudgetMicros: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
    /** true: refuse new calls once the month's spend reaches the budget. */
    budgetHardLimit: z.boolean().optional(),
    /** Days call recordings are kept before they are deleted; null keeps them until deleted through the API. */
    recordingRetentionDays: z.number().int().min(1).max(3650).nullable().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'Send at least one of maxConcurrentCalls, monthlyBudgetMicros, budgetHardLimit, recordingRetentionDays.' });
class UpdateOrganizationBodyDto extends createApiDto(updateOrganizationBody) {}

const organizationSchema = z.strictObject({
  id: uuid,
  name: z.string(),
  createdAt: isoDateTime,
  maxConcurrentCalls: z.number().int().nullable().describe("The organization's own limit; null: the deployment default."),
  maxConcurrentCallsCap: z.number().int().describe("The operator's ceiling for this organization's limit (MAX_CONCURRENT_CALLS_CAP, or set per organization with the operator key)."),
  effectiveMaxConcurrentCalls: z.number().int().describe('The limit enforced now.'),
  activeCalls: z.number().int(),
  refusedCallsLast24h: z.number().int().describe('Calls refused in the last 24 hours (over the concurrency limit, the hard budget or the inference capacity).'),
  refusedCallsTotal: z.number().int(),
  recordingRetentionDays: z.number().int().nullable().describe('Days call recordings are kept; null: until deleted through the API.'),
  inferenceCapacity: z
    .strictObject({
      state: z.enum(['measuring', 'measured']).describe('measuring: no cost per call measured yet on this instance, so calls are admitted; measured: admission by capacity applies.'),
      workers: z.number().int().describe('Inference worker threads of the instance that answered (0 before its runtime starts).'),
      maxUtilisation: z.number().describe('INFERENCE_MAX_UTILISATION: the share of the workers admission plans to fill.'),
      utilisation: z.number().describe("Share of the workers' time their batches took over the last 30 s."),
      streamingUtilisation: z.number().describe('Share the streaming models (fed by every call continuously, e.g. the VAD) took over the last 5 s: counted as measured, not priced per call.'),
      liveCalls: z.number().int().describe('Calls in progress on this instance (every organization).'),
      reservedCalls: z.number().int().describe('Calls admitted here whose media stream has not started yet.'),
      costPerCall: z.number().nullable().describe('Worker-seconds per second one more call is predicted to cost (the per-turn models: ASR, TTS, turn model, LLM); null while measuring or when none ran.'),
      predictedUtilisation: z.number().nullable().describe('The streaming load plus the live and reserved calls at costPerCall.'),
      callsHeadroom: z.number().int().nullable().describe('More calls this instance admits now before refusing with reason `capacity`; null while measuring, or while only streaming models run and their load is under maxUtilisation.'),
      costPerCallSecond: z.record(z.string(), z.number()).describe('Measured worker-seconds per second of call, by local model.'),
      streamingModels: z.array(z.string()).describe('Models every call feeds continuously (e.g. silero-vad-v5).'),
    })
    .describe("The inference capacity of the server instance that answered (shared by every organization on it, and per instance behind a load balancer): a call is refused with reason `capacity` when it would take the predicted load past maxUtilisation."),
  budget: z.strictObject({
    monthlyBudgetMicros: z.number().int().nullable().describe('Null: no budget.'),
    monthlyBudget: z.string().nullable(),
    hardLimit: z.boolean().describe('Refuse new calls once the budget is spent.'),
    currency: z.string(),
    month: z.string().describe('YYYY-MM (UTC).'),
    spentMicros: z.number().int().describe('Spend of the calls that started this month.'),
    spent: z.string(),
  }),
});
class OrganizationDto extends createApiDto(organizationSchema) {}
type OrganizationView = OrganizationCallUsage & {
  recordingRetentionDays: number | null;
  inferenceCapacity: z.infer<typeof organizationSchema>['inferenceCapacity'];
  budget: z.infer<typeof organizationSchema>['budget'];
};

/** The API key's own organization: its concurrency limit and monthly budget, and how much of each is in use. */
@ApiTags('Organization')
@ApiKeyAuthenticated()
@Controller('v1/organization')
@UseGuards(ApiKeyGuard)
export class OrganizationController {
  constructor(
    private readonly settings: OrganizationSettingsService,
    private readonly capacity: InferenceCapacityService,
  ) {}

  @Get()
  @ApiOkResponse({ type: OrganizationDto })
  async get(@Principal() principal: ApiPrincipal): Promise<OrganizationView> {
    return this.usage(principal.organizationId);
  }

  @Patch()
  @RequireScope('admin')
  @ApiOkResponse({
    type: OrganizationDto,
    description: 'Sets the concurrency limit (null: back to the deployment default; 0 refuses every call), the monthly budget and whether it is a hard limit, and/or how many days call recordings are kept.',
  })
  @ApiErrors(400, 403)
  async update(
    @Principal() principal: ApiPrincipal,
    @Body(new ZodValidationPipe(updateOrganizationBody)) body: UpdateOrganizationBodyDto,
  ): Promise<OrganizationView> {
    const { organizationId } = principal;
    if (body.maxConcurrentCalls !== undefined) {
      const outcome = await this.settings.setMaxConcurrentCalls(organizationId, body.maxConcurrentCalls);
      if (outcome === 'not_found') throw organizationGone();
      if (outcome !== 'updated') throw overCap(outcome.overCap);
    }
    const budget = { monthlyBudgetMicros: body.monthlyBudgetMicros, hardLimit: body.budgetHardLimit };
    if ((budget.monthlyBudgetMicros !== undefined || budget.hardLimit !== undefined) && !(await this.settings.setBudget(organizationId, budget))) {
      throw organizationGone();
    }
    if (body.recordingRetentionDays !== undefined && !(await this.settings.setRecordingRetentionDays(organizationId, body.recordingRetentionDays))) {
      throw organizationGone();
    }
    return this.usage(organizationId);
  }

  private async usage(organizationId: string): Promise<OrganizationView> {
    const { usage, budget, recordingRetentionDays } = await this.settings.usage(organizationId);
    if (!usage || !budget || recordingRetentionDays === undefined) throw organizationGone();
    return {
      ...usage,
      recordingRetentionDays,
      inferenceCapacity: this.capacity.snapshot(),
      budget: {
        monthlyBudgetMicros: budget.budgetMicros,
        monthlyBudget: budget.budgetMicros === null ? null : formatMicros(budget.budgetMicros),
        hardLimit: budget.hardLimit,
        currency: budget.currency,
        month: budget.monthStart.toISOString().slice(0, 7),
        spentMicros: budget.spentMicros,
        spent: formatMicros(budget.spentMicros),
      },
    };
  }
}

/** The operator decides how many live calls an organization may have at most; the organization only chooses below that. */
function overCap(cap: number): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    code: 'validation_failed',
    message: `maxConcurrentCalls may be at most ${cap}, the cap the operator set for this organization.`,
    details: [{ path: 'maxConcurrentCalls', message: `must be at most ${cap} (the operator's cap)` }],
  });
}

/** The key authenticated a moment ago, so its organization was deleted in between. */
function organizationGone(): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'organization_not_found', message: 'The organization no longer exists.' });
}
