import { createHash } from 'node:crypto';
import { CallControlError } from '@switchboard/conversation';
import { Twilio } from 'twilio';
import { ApiBaseUrlRequestClient } from './api-base-url-request-client';
import { TwilioCallControl } from './twilio-call-control';

/** A hang-up or transfer that Twilio has not answered by then is reported as failed. */
export const DEFAULT_TWILIO_REST_TIMEOUT_MS = 10_000;

/** twilio-node's own API origin: configuring it explicitly means "no override". */
const TWILIO_API_DEFAULT_ORIGIN = 'https://api.twilio.com';

export interface TwilioRestClientSettings {
  /** TWILIO_ACCOUNT_SID; optional in the environment (local development runs without Twilio). */
  accountSid: string | undefined;
  /** TWILIO_AUTH_TOKEN. */
  authToken: string | undefined;
  /**
   * TWILIO_API_BASE_URL: replaces https://api.twilio.com, e.g. http://127.0.0.1:PORT for the
   * FakeTwilioRestServer in tests. Unset (or https://api.twilio.com) in production.
   */
  apiBaseUrl?: string;
  timeoutMs?: number;
}

/** The base URL to redirect to, or undefined when it is Twilio's own (edge/region settings then still apply). */
function apiBaseUrlOverride(apiBaseUrl: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(apiBaseUrl);
  } catch {
    throw new Error('TWILIO_API_BASE_URL is not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('TWILIO_API_BASE_URL must be an http(s) URL');
  if (parsed.search !== '' || parsed.hash !== '') throw new Error('TWILIO_API_BASE_URL must not have a query string or fragment');
  const normalised = apiBaseUrl.replace(/\/+$/, '');
  return normalised === TWILIO_API_DEFAULT_ORIGIN ? undefined : normalised;
}

/** An account's REST credentials: the operator's (TWILIO_*) or an organization's own. */
export interface TwilioRestCredentials {
  accountSid: string;
  authToken: string;
}

/** Clients kept for organizations' accounts; the least recently used is dropped beyond this. */
const MAX_CACHED_ACCOUNT_CLIENTS = 256;

/**
 * Builds the twilio-node REST clients the server uses (lazily: nothing happens until the first call
 * is controlled): the operator's, and one per organization's own account, every one of them sent to
 * TWILIO_API_BASE_URL (Twilio, or a local fake in tests), never to a URL a tenant chose. Without
 * operator credentials the server still runs; only restClient() refuses, naming the missing settings.
 */
export class TwilioRestClientFactory {
  private client: Twilio | undefined;
  private readonly accountClients = new Map<string, Twilio>();
  private readonly apiBaseUrl: string | undefined;

  /** Throws when apiBaseUrl is set but unusable (a configuration mistake worth failing start-up for). */
  constructor(private readonly settings: TwilioRestClientSettings) {
    this.apiBaseUrl = settings.apiBaseUrl === undefined ? undefined : apiBaseUrlOverride(settings.apiBaseUrl);
  }

  get isConfigured(): boolean {
    return Boolean(this.settings.accountSid) && Boolean(this.settings.authToken);
  }

  /** The shared client; throws when TWILIO_ACCOUNT_SID or TWILIO_AUTH_TOKEN is missing. */
  restClient(): Twilio {
    if (this.client !== undefined) return this.client;
    const { accountSid, authToken } = this.settings;
    if (!accountSid || !authToken) {
      throw new CallControlError('Twilio call control needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN to be set');
    }
    const timeout = this.settings.timeoutMs ?? DEFAULT_TWILIO_REST_TIMEOUT_MS;
    this.client = new Twilio(accountSid, authToken, {
      timeout,
      ...(this.apiBaseUrl !== undefined && { httpClient: new ApiBaseUrlRequestClient(this.apiBaseUrl, { timeout }) }),
    });
    return this.client;
  }

  /** Throws a CallControlError when Twilio is not configured or `callSid` is not a call SID. */
  callControl(callSid: string): TwilioCallControl {
    return new TwilioCallControl(this.restClient(), callSid);
  }

  /** A client for one account (an organization's own), cached by account and token. */
  forAccount(credentials: TwilioRestCredentials): Twilio {
    const { accountSid, authToken } = credentials;
    if (accountSid === this.settings.accountSid && authToken === this.settings.authToken) return this.restClient();
    // The token is part of the cache key (hashed: no secret kept as a map key): a replaced token gets a new client.
    const key = `${accountSid}:${createHash('sha256').update(authToken).digest('hex')}`;
    let client = this.accountClients.get(key);
    if (client) {
      this.accountClients.delete(key);
    } else {
      const timeout = this.settings.timeoutMs ?? DEFAULT_TWILIO_REST_TIMEOUT_MS;
      client = new Twilio(accountSid, authToken, {
        timeout,
        ...(this.apiBaseUrl !== undefined && { httpClient: new ApiBaseUrlRequestClient(this.apiBaseUrl, { timeout }) }),
      });
    }
    this.accountClients.set(key, client);
    if (this.accountClients.size > MAX_CACHED_ACCOUNT_CLIENTS) this.accountClients.delete(this.accountClients.keys().next().value!);
    return client;
  }

  /** Call control of one call with the credentials of the account it belongs to. */
  callControlFor(credentials: TwilioRestCredentials, callSid: string): TwilioCallControl {
    return new TwilioCallControl(this.forAccount(credentials), callSid);
  }
}
