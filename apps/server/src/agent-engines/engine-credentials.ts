import { Injectable } from '@nestjs/common';
import { resolveOperatorKey } from '@switchboard/agent-config';
import { SecretsService } from '../secrets/secrets.service';

/** Why an engine cannot be built for a call: shown in the call's `error` event, so it names what to fix. */
export class EngineConfigError extends Error {
  override readonly name = 'EngineConfigError';
}

/** An engine's key for one call, and what distinguishes it in engine caches (never the key itself). */
export interface EngineKey {
  apiKey: string | undefined;
  /** e.g. `secret:<org>:<name>:<version>` or `env:OPENAI_API_KEY`: a replaced secret gets a new engine. */
  cacheKey: string;
}

/**
 * Where an engine's API key comes from for a call: the organization's vault (`apiKeySecret`), or
 * the operator's environment key (`apiKeyEnv`), which only goes to the provider's own endpoint (checked
 * again here, for configs stored before that rule existed).
 */
@Injectable()
export class EngineCredentials {
  constructor(private readonly secrets: SecretsService) {}

  async keyFor(organizationId: string, settings: { apiKeySecret?: string; apiKeyEnv?: string }, url: string | undefined): Promise<EngineKey> {
    if (settings.apiKeySecret !== undefined) {
      const secret = await this.secrets.resolve(organizationId, settings.apiKeySecret);
      if (!secret) throw new EngineConfigError(`the secret "${settings.apiKeySecret}" does not exist in this organization (POST /v1/secrets)`);
      return { apiKey: secret.value, cacheKey: `secret:${organizationId}:${settings.apiKeySecret}:${secret.version}` };
    }
    if (settings.apiKeyEnv !== undefined) {
      try {
        return { apiKey: resolveOperatorKey(settings.apiKeyEnv, url), cacheKey: `env:${settings.apiKeyEnv}` };
      } catch (error) {
        throw new EngineConfigError((error as Error).message);
      }
    }
    return { apiKey: undefined, cacheKey: 'none' };
  }
}
