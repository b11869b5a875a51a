import { Injectable } from '@nestjs/common';
import { CallAnalysisRepository, CallRepository, CostRepository, type ListCallsInput } from '@switchboard/persistence';

/** Read access to an organization's call records, with each call's cost ledger and post-call analysis. */
@Injectable()
export class CallRecordsService {
  constructor(
    private readonly calls: CallRepository,
    private readonly costs: CostRepository,
    private readonly analyses: CallAnalysisRepository,
  ) {}

  list(input: ListCallsInput) {
    return this.calls.list(input);
  }

  /** The call with its cost and analysis; null for another organization's call or none. */
  async detail(organizationId: string, id: string) {
    const call = await this.calls.findDetail(organizationId, id);
    if (!call) return null;
    const [cost, analysis] = await Promise.all([this.costs.callCost(organizationId, call.id), this.analyses.find(organizationId, call.id)]);
    return { call, cost, analysis };
  }
}
