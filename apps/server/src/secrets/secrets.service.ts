import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { OrganizationSecretRepository, PersistenceError, type OrganizationSecretRecord } from '@switchboard/persistence';
import { open, seal, secretHint, SecretOpenError, type SecretKeyRing } from '@switchboard/secrets';
import { SECRET_KEY_RING } from './secret-key-ring.provider';

/** Longest value a secret may hold: API keys and signing secrets are far shorter. */
export const MAX_SECRET_VALUE_CHARS = 8_192;

/** A secret's value as an engine or tool needs it, with the version that names it in caches. */
export interface ResolvedSecret {
  value: string;
  version: number;
}

/** A secret that exists but cannot be opened (the key it was sealed with is missing, or it was tampered with). */
export class SecretUnavailableError extends Error {
  override readonly name = 'SecretUnavailableError';
}

/** The organization already has a secret of this name (creating does not replace). */
export class SecretExistsError extends Error {
  override readonly name = 'SecretExistsError';
  constructor(readonly secretName: string) {
    super(`A secret named "${secretName}" already exists`);
  }
}

/**
 * The vault: organizations' secrets, sealed with AES-256-GCM (a random nonce per write, the
 * organization id as associated data) before they reach the database, opened only in this process
 * when an engine or a tool needs the value. Values never leave through the API or the logs.
 */
@Injectable()
export class SecretsService implements OnApplicationBootstrap {
  private readonly logger = new Logger(SecretsService.name);

  constructor(
    @Inject(SECRET_KEY_RING) private readonly ring: SecretKeyRing,
    private readonly secrets: OrganizationSecretRepository,
  ) {}

  /**
   * Says at start-up (rather than at the first call that needs one) when stored values are sealed
   * with keys this server does not have: a missing SECRETS_PREVIOUS_KEYS entry after a rotation.
   */
  async onApplicationBootstrap(): Promise<void> {
    try {
      const counts = await this.secrets.countByKeyId();
      for (const [keyId, count] of counts) {
        if (!this.ring.has(keyId)) this.logger.error(`${count} secret value(s) are sealed with key ${keyId}, which this server does not have: set it in SECRETS_PREVIOUS_KEYS (or SECRETS_ENCRYPTION_KEY)`);
        else if (keyId !== this.ring.activeKeyId) this.logger.warn(`${count} secret value(s) are still sealed with previous key ${keyId}: run \`npm run secrets -- rotate\``);
      }
    } catch (error) {
      this.logger.warn(`could not check which keys seal the stored secrets: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Throws SecretExistsError when the organization already has a secret of that name. */
  async create(organizationId: string, name: string, value: string): Promise<OrganizationSecretRecord> {
    try {
      return await this.secrets.create(organizationId, name, this.sealed(organizationId, value));
    } catch (error) {
      if (error instanceof PersistenceError && error.code === 'conflict') throw new SecretExistsError(name);
      throw error;
    }
  }

  /** Null when the organization has no secret of that name. No config changes: the next use reads the new value. */
  replace(organizationId: string, name: string, value: string): Promise<OrganizationSecretRecord | null> {
    return this.secrets.replace(organizationId, name, this.sealed(organizationId, value));
  }

  delete(organizationId: string, name: string): Promise<boolean> {
    return this.secrets.delete(organizationId, name);
  }

  list(organizationId: string): Promise<OrganizationSecretRecord[]> {
    return this.secrets.list(organizationId);
  }

  /** Which of `names` the organization has (save-time check of an agent config's references). */
  existingNames(organizationId: string, names: readonly string[]): Promise<Set<string>> {
    return this.secrets.existingNames(organizationId, names);
  }

  /** The organization's secret opened, or null when it has none by that name. */
  async resolve(organizationId: string, name: string): Promise<ResolvedSecret | null> {
    const stored = await this.secrets.findSealed(organizationId, name);
    if (!stored) return null;
    try {
      return { value: open(this.ring, stored, organizationId), version: stored.version };
    } catch (error) {
      if (!(error instanceof SecretOpenError)) throw error;
      throw new SecretUnavailableError(`secret "${name}" cannot be opened: ${error.message}`);
    }
  }

  private sealed(organizationId: string, value: string) {
    return { ...seal(this.ring, value, organizationId), hint: secretHint(value) };
  }
}
