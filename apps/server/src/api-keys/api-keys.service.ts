import { Injectable } from '@nestjs/common';
import { ApiKeyRepository, type ApiKeyRecord, type ApiKeyScope } from '@switchboard/persistence';
import { generateApiKey } from './api-key-secret';

/** An organization's API keys: minted here (the raw key leaves once, in the result), listed, revoked. */
@Injectable()
export class ApiKeysService {
  constructor(private readonly apiKeys: ApiKeyRepository) {}

  async create(organizationId: string, name: string, scopes: ApiKeyScope[]): Promise<{ record: ApiKeyRecord; rawKey: string }> {
    const { rawKey, prefix } = generateApiKey();
    const record = await this.apiKeys.create({ organizationId, name, rawKey, prefix, scopes });
    return { record, rawKey };
  }

  /** Every key of the organization, revoked ones included. */
  list(organizationId: string): Promise<ApiKeyRecord[]> {
    return this.apiKeys.list(organizationId);
  }

  /** False when the organization has no such key. */
  revoke(organizationId: string, id: string): Promise<boolean> {
    return this.apiKeys.revoke(organizationId, id);
  }
}
