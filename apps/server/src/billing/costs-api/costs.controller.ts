import { Body, Controller, Get, Headers, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../../auth/api-key.guard';
import { Principal } from '../../auth/principal.decorator';
import { RequireScope } from '../../auth/require-scope.decorator';
import { ZodValidationPipe } from '../../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../../openapi/api-schemas';
import { newCatalogVersionBody, NewCatalogVersionBodyDto } from './price-catalog-requests.schema';
import { callNotFound } from '../../calls/outbound-call-errors';
import { callIdParam } from '../../calls/outbound-call-requests.schema';
import { CallCostDto, callCostView, catalogView, PriceCatalogDto, PriceCatalogListDto } from './cost-responses.schema';
import { CostsService } from './costs.service';
import { usageQuery, UsageQueryDto, usageReportCsv, UsageReportDto, usageReportView } from './usage-report.schema';


/**
 * What calls cost: each call's ledger, the usage report, and the organization's price catalog.
 * Every amount is an integer of micro-units plus the exact decimal string; never a float.
 */
@ApiTags('Costs')
@ApiKeyAuthenticated()
@Controller('v1')
@UseGuards(ApiKeyGuard)
export class CostsController {
  constructor(private readonly costs: CostsService) {}

  @Get('calls/:id/cost')
  @ApiOkResponse({ type: CallCostDto, description: "The call's cost ledger (status pending while the call is live)." })
  @ApiErrors(404)
  async callCost(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(callIdParam)) id: string) {
    const ledger = await this.costs.callCost(principal.organizationId, id);
    if (!ledger.found) throw callNotFound(id);
    return callCostView(ledger.callId, ledger.cost);
  }

  @Get('usage')
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({ type: UsageReportDto, description: 'Spend of the calls that started in [from, to), grouped; `format=csv` (or Accept: text/csv) for CSV.' })
  @ApiErrors(400)
  async usage(
    @Principal() principal: ApiPrincipal,
    @Query(new ZodValidationPipe(usageQuery)) query: UsageQueryDto & z.output<typeof usageQuery>,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ) {
    const report = await this.costs.usage({ organizationId: principal.organizationId, from: query.from, to: query.to, groupBy: query.groupBy });
    const csv = query.format === 'csv' || (query.format === undefined && /\btext\/csv\b/.test(accept ?? ''));
    if (!csv) return usageReportView(report);
    response.setHeader('content-type', 'text/csv; charset=utf-8');
    response.setHeader('content-disposition', `attachment; filename="usage-${query.groupBy}-${report.from.toISOString().slice(0, 10)}.csv"`);
    return usageReportCsv(report);
  }

  @Get('price-catalog')
  @ApiOkResponse({ type: PriceCatalogListDto })
  async catalogs(@Principal() principal: ApiPrincipal) {
    const { inForce, operator, own, defaults } = await this.costs.catalogs(principal.organizationId);
    return { inForce: catalogView(inForce), operator: operator.map(catalogView), own: own.map(catalogView), defaults: defaults.map(catalogView) };
  }

  @Post('price-catalog')
  @RequireScope('admin')
  @ApiCreatedResponse({
    type: PriceCatalogDto,
    description:
      "A new immutable version of the organization's OWN prices: calls that start from effectiveFrom on show what they cost at them (ownPricing in GET /v1/calls/:id/cost). What calls are billed with is the operator's catalog.",
  })
  @ApiErrors(400, 403)
  async createCatalogVersion(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(newCatalogVersionBody)) body: NewCatalogVersionBodyDto) {
    const created = await this.costs.createCatalogVersion({
      organizationId: principal.organizationId,
      setBy: 'organization',
      prices: body.prices,
      currency: body.currency,
      effectiveFrom: body.effectiveFrom,
    });
    return catalogView(created);
  }
}
