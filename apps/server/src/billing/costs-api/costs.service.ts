import { Injectable } from '@nestjs/common';
import { CallRepository, CostRepository, type NewCatalogVersionInput, type UsageQuery } from '@switchboard/persistence';

/**
 * What calls cost: a call's ledger, the usage report and the price catalogs (amounts are integer
 * micro-units). The controller owns HTTP: views, CSV, status codes.
 */
@Injectable()
export class CostsService {
  constructor(
    private readonly costs: CostRepository,
    private readonly calls: CallRepository,
  ) {}

  /** The call's cost ledger (null while none is written); `found` is false for another organization's or no call. */
  async callCost(organizationId: string, callId: string) {
    const call = await this.calls.findForOrganization(organizationId, callId);
    if (!call) return { found: false as const };
    return { found: true as const, callId: call.id, cost: await this.costs.callCost(organizationId, call.id) };
  }

  usage(query: UsageQuery) {
    return this.costs.usage(query);
  }

  /** The catalog in force, the operator's versions, the organization's own versions and the defaults. */
  catalogs(organizationId: string) {
    return this.costs.catalogs(organizationId);
  }

  createCatalogVersion(input: NewCatalogVersionInput) {
    return this.costs.createCatalogVersion(input);
  }
}
