import { Injectable } from '@nestjs/common';
import { CostRepository, OrganizationRepository, type NewCatalogVersionInput } from '@switchboard/persistence';
import { generateApiKey } from '../api-keys/api-key-secret';

/** The operator's side of organizations: create one with its first admin key, list, cap, bill. */
@Injectable()
export class OperatorOrganizationsService {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly costs: CostRepository,
  ) {}

  /** The raw admin key leaves here once, in the result. */
  async createWithAdminKey(input: { name: string; maxConcurrentCalls: number | null; maxConcurrentCallsCap: number | null; adminKeyName: string }) {
    const { rawKey, prefix } = generateApiKey();
    const created = await this.organizations.createWithAdminKey({
      name: input.name,
      maxConcurrentCalls: input.maxConcurrentCalls,
      maxConcurrentCallsCap: input.maxConcurrentCallsCap,
      adminKey: { name: input.adminKeyName, rawKey, prefix },
    });
    return { created, rawKey, prefix };
  }

  list() {
    return this.organizations.list();
  }

  /** The organization as listed after the change; null when there is no such organization. */
  async setConcurrencyCap(id: string, cap: number | null) {
    if (!(await this.organizations.setConcurrencyCap(id, cap))) return null;
    return (await this.organizations.list()).find((candidate) => candidate.id === id) ?? null;
  }

  /** A new version of the prices the organization's calls are billed with; null when there is no such organization. */
  async createOperatorCatalogVersion(id: string, prices: Omit<NewCatalogVersionInput, 'organizationId' | 'setBy'>) {
    if (!(await this.organizations.findById(id))) return null;
    return this.costs.createCatalogVersion({ organizationId: id, setBy: 'operator', ...prices });
  }
}
