import { ConflictException, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { ApiKeyRepository, type ApiKeyRecord, type ApiKeyScope } from '@switchboard/persistence';
import { generateApiKey } from './api-key-secret';

/** An organization's API keys: minted here (the raw key leaves once, in the result), listed, revoked. */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly apiKeys: ApiKeyRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * At most MAX_API_KEYS_PER_ORG active keys per organization (409 `api_key_limit_reached` past
   * it): each key carries its own rate limit, so unlimited keys would be unlimited throughput and
   * an unbounded set of secrets to leak.
   */
  async create(organizationId: string, name: string, scopes: ApiKeyScope[]): Promise<{ record: ApiKeyRecord; rawKey: string }> {
    const { rawKey, prefix } = generateApiKey();
    const max = this.config.maxApiKeysPerOrganization;
    const result = await this.apiKeys.createWithinLimit({ organizationId, name, rawKey, prefix, scopes }, max);
    if (!result.created) {
      throw new ConflictException({
        statusCode: 409,
        error: 'Conflict',
        code: 'api_key_limit_reached',
        message: `This organization already has ${result.active} active API keys (the limit is ${max}); revoke one before creating another.`,
      });
    }
    return { record: result.record, rawKey };
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
