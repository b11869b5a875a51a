import { CallControlError } from '@switchboard/conversation/call/call-control';
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

/**
 * Builds the one twilio-node REST client the server uses (lazily: nothing happens until the first
 * call is controlled) and a CallControl per call SID. Without credentials the server still runs;
 * only callControl() refuses, with an error naming the missing settings.
 */
export class TwilioRestClientFactory {
  private client: Twilio | undefined;
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
}
