import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { ACCOUNT_SID_PATTERN, PersistenceError, PhoneNumberRepository, TwilioAccountRepository } from '@switchboard/persistence';
import { open, seal, type SecretKeyRing } from '@switchboard/secrets';
import { SECRET_KEY_RING } from '../../secrets/secret-key-ring.provider';
import { isTwilioErrorAnswer, transportErrorDetail } from '../call-control/twilio-failure';
import { TwilioRestClientFactory, type TwilioRestCredentials } from '../call-control/twilio-rest-client.factory';
import { BootstrapOrganization } from './bootstrap-organization';

/** The associated-data purpose organizations' Twilio auth tokens are sealed under (never confusable with a vault secret). */
export const TWILIO_TOKEN_PURPOSE = 'twilio-auth-token';

/** Whose account signed a Twilio request: the operator's (TWILIO_*) or an organization's own. */
export type TwilioAccountOwner = { kind: 'operator' } | { kind: 'organization'; organizationId: string };

/** What verifies an account's webhooks and speaks to Twilio for it. */
export interface TwilioAccountCredentials {
  /** Undefined only for the operator's account when TWILIO_ACCOUNT_SID is unset (local development). */
  accountSid: string | undefined;
  authToken: string;
  owner: TwilioAccountOwner;
}

/** Why an organization's Twilio account could not be connected or a number not checked. */
export class TwilioAccountError extends Error {
  override readonly name = 'TwilioAccountError';
  constructor(
    readonly code: 'twilio_credentials_invalid' | 'twilio_unreachable' | 'twilio_account_missing' | 'twilio_not_configured' | 'twilio_account_taken',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Each organization but the bootstrap one brings its own Twilio account (its auth token sealed like
 * a vault secret); the deployment's TWILIO_* account is the operator's and serves the bootstrap
 * organization. This service answers: which token verifies a request signed for an AccountSid, whose
 * account that is, which credentials act for an organization, and whether a number belongs to it.
 */
@Injectable()
export class TwilioAccountService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_KEY_RING) private readonly ring: SecretKeyRing,
    private readonly accounts: TwilioAccountRepository,
    private readonly restClients: TwilioRestClientFactory,
    private readonly bootstrap: BootstrapOrganization,
    private readonly phoneNumbers: PhoneNumberRepository,
  ) {}

  /**
   * The credentials that verify a request Twilio signed for `accountSid`: the operator's for
   * TWILIO_ACCOUNT_SID, else an organization's own account, else the operator's when
   * TWILIO_ACCOUNT_SID is unset (its token then answers for any account no organization registered).
   * Null when nobody here holds that account.
   */
  async forAccountSid(accountSid: string): Promise<TwilioAccountCredentials | null> {
    // The deployment's account is the operator's even if a tenant stored it before that was refused.
    const operator = this.operatorCredentials();
    if (operator?.accountSid !== undefined && sameAccountSid(operator.accountSid, accountSid)) return operator;
    const stored = ACCOUNT_SID_PATTERN.test(accountSid) ? await this.accounts.findByAccountSid(accountSid) : null;
    if (stored) {
      return {
        accountSid: stored.accountSid,
        authToken: open(this.ring, stored, stored.organizationId, TWILIO_TOKEN_PURPOSE),
        owner: { kind: 'organization', organizationId: stored.organizationId },
      };
    }
    if (!operator) return null;
    if (operator.accountSid !== undefined) return null;
    return operator;
  }

  /** The operator's account (TWILIO_*), or null when TWILIO_AUTH_TOKEN is unset. */
  operatorCredentials(): TwilioAccountCredentials | null {
    const { accountSid, authToken } = this.config.twilio;
    return authToken ? { accountSid, authToken, owner: { kind: 'operator' } } : null;
  }

  /** The account that acts for an organization: its own, or the operator's for the bootstrap organization. */
  async forOrganization(organizationId: string): Promise<TwilioAccountCredentials | null> {
    if (await this.bootstrap.isBootstrap(organizationId)) return this.operatorCredentials();
    const stored = await this.accounts.findByOrganization(organizationId);
    if (!stored) return null;
    return { accountSid: stored.accountSid, authToken: open(this.ring, stored, organizationId, TWILIO_TOKEN_PURPOSE), owner: { kind: 'organization', organizationId } };
  }

  /** REST credentials (account SID and token) of a webhook's account, when it has an SID to call Twilio with. */
  restCredentials(credentials: TwilioAccountCredentials | null): TwilioRestCredentials | null {
    return credentials?.accountSid ? { accountSid: credentials.accountSid, authToken: credentials.authToken } : null;
  }

  /** Whether requests for this organization may be signed by `owner`'s account. */
  async mayActFor(owner: TwilioAccountOwner, organizationId: string): Promise<boolean> {
    if (owner.kind === 'organization') return owner.organizationId === organizationId;
    return this.bootstrap.isBootstrap(organizationId);
  }

  /** The organization's own account SID, or null. */
  async accountSidOf(organizationId: string): Promise<{ accountSid: string; updatedAt: Date } | null> {
    const stored = await this.accounts.findByOrganization(organizationId);
    return stored && { accountSid: stored.accountSid, updatedAt: stored.updatedAt };
  }

  /**
   * Connects the organization's own account: the credentials are checked with Twilio (fetching the
   * account), then the token is sealed and stored. An account already another organization's, or the
   * deployment's own (TWILIO_*, the bootstrap organization's), is refused ('twilio_account_taken'):
   * checked after Twilio accepted the credentials, so only the account's holder learns it is taken.
   */
  async connect(organizationId: string, accountSid: string, authToken: string): Promise<{ accountSid: string; updatedAt: Date }> {
    try {
      await this.restClients.forAccount({ accountSid, authToken }).api.v2010.accounts(accountSid).fetch();
    } catch (error) {
      if (isTwilioErrorAnswer(error) && (error.status === 401 || error.status === 403 || error.status === 404)) {
        throw new TwilioAccountError('twilio_credentials_invalid', `Twilio refused these credentials for ${accountSid} (HTTP ${error.status}).`);
      }
      throw new TwilioAccountError('twilio_unreachable', `Could not check the credentials with Twilio: ${isTwilioErrorAnswer(error) ? `HTTP ${error.status}` : transportErrorDetail(error)}.`);
    }
    if (this.isOperatorAccount(accountSid, authToken)) {
      throw new TwilioAccountError('twilio_account_taken', "This Twilio account is the deployment's own (TWILIO_ACCOUNT_SID).");
    }
    try {
      const stored = await this.accounts.upsert(organizationId, accountSid, seal(this.ring, authToken, organizationId, TWILIO_TOKEN_PURPOSE));
      return { accountSid: stored.accountSid, updatedAt: stored.updatedAt };
    } catch (error) {
      if (error instanceof PersistenceError && error.code === 'conflict') {
        throw new TwilioAccountError('twilio_account_taken', 'This Twilio account is connected to another organization.');
      }
      throw error;
    }
  }

  /**
   * Whether an account is the operator's: its SID is TWILIO_ACCOUNT_SID, or, when that is unset (the
   * operator's token then answers for any unregistered account), its token is TWILIO_AUTH_TOKEN.
   */
  private isOperatorAccount(accountSid: string, authToken: string): boolean {
    const operator = this.operatorCredentials();
    if (!operator) return false;
    if (operator.accountSid !== undefined) return sameAccountSid(operator.accountSid, accountSid);
    return sameSecret(operator.authToken, authToken);
  }

  /** Whether phone numbers are still bound to the organization (its account cannot be disconnected then). */
  async hasNumbers(organizationId: string): Promise<boolean> {
    return (await this.phoneNumbers.countForOrganization(organizationId)) > 0;
  }

  disconnect(organizationId: string): Promise<boolean> {
    return this.accounts.delete(organizationId);
  }

  /**
   * Whether `e164` is a number of the organization's Twilio account, asked of Twilio
   * (IncomingPhoneNumbers). The bootstrap organization's numbers are the operator's: no check.
   */
  async ownsNumber(organizationId: string, e164: string): Promise<boolean> {
    if (await this.bootstrap.isBootstrap(organizationId)) return true;
    const rest = this.restCredentials(await this.forOrganization(organizationId));
    if (!rest) throw new TwilioAccountError('twilio_account_missing', 'Connect your Twilio account first (PUT /v1/organization/twilio-account): numbers must belong to it.');
    try {
      // PhoneNumber is a prefix/wildcard filter at Twilio: only an exact match counts.
      const numbers = await this.restClients.forAccount(rest).incomingPhoneNumbers.list({ phoneNumber: e164, limit: 20 });
      return numbers.some((number) => number.phoneNumber === e164);
    } catch (error) {
      const detail = isTwilioErrorAnswer(error) ? `HTTP ${error.status}${error.code === undefined ? '' : ` (code ${error.code})`}` : transportErrorDetail(error);
      throw new TwilioAccountError('twilio_unreachable', `Could not ask Twilio whether ${e164} belongs to your account: ${detail}.`);
    }
  }
}

/** SIDs are accepted in either case of hex (ACCOUNT_SID_PATTERN): one account must not pass as two spellings. */
function sameAccountSid(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function sameSecret(a: string, b: string): boolean {
  const digestOf = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digestOf(a), digestOf(b));
}
