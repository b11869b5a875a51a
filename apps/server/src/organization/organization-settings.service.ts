import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallRecordingRepository, CostRepository, OrganizationRepository } from '@switchboard/persistence';
import { concurrencyPolicyOf } from '../call-lifecycle/concurrency-policy';

/**
 * An organization's own settings (concurrency limit, monthly budget, recording retention) and how
 * much of each is in use. False or null: the organization no longer exists.
 */
@Injectable()
export class OrganizationSettingsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly organizations: OrganizationRepository,
    private readonly costs: CostRepository,
    private readonly recordings: CallRecordingRepository,
  ) {}

  /** 'updated', 'not_found', or the operator's cap the value is over. */
  setMaxConcurrentCalls(organizationId: string, maxConcurrentCalls: number | null) {
    return this.organizations.setMaxConcurrentCalls(organizationId, maxConcurrentCalls, concurrencyPolicyOf(this.config));
  }

  setBudget(organizationId: string, budget: { monthlyBudgetMicros?: number | null; hardLimit?: boolean }): Promise<boolean> {
    return this.costs.setBudget(organizationId, budget);
  }

  setRecordingRetentionDays(organizationId: string, days: number | null): Promise<boolean> {
    return this.recordings.setRetentionDays(organizationId, days);
  }

  /** Call usage against the limit, the budget's status this month, and the recording retention. */
  async usage(organizationId: string) {
    const [usage, budget, recordingRetentionDays] = await Promise.all([
      this.organizations.callUsage(organizationId, concurrencyPolicyOf(this.config)),
      this.costs.budgetStatus(organizationId),
      this.recordings.retentionDays(organizationId),
    ]);
    return { usage, budget, recordingRetentionDays };
  }
}
