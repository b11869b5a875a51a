import type { FakeTwilioRestServer } from '@switchboard/testing';
import { uniqueE164 } from './database';
import type { TestServer } from './test-server';

/** An organization's own Twilio account (on the fake Twilio REST server). */
export interface TenantTwilioAccount {
  accountSid: string;
  authToken: string;
}

/**
 * Every organization but the bootstrap one brings its own Twilio account: a fresh account on the fake
 * Twilio REST server (which the test server must use: TWILIO_API_BASE_URL), connected to the
 * organization of `apiKey` through the API, which checks the credentials with the fake.
 */
export async function connectTwilioAccount(server: Pick<TestServer, 'api'>, apiKey: string, twilio: FakeTwilioRestServer): Promise<TenantTwilioAccount> {
  const account = twilio.addAccount();
  const connected = await server.api('/v1/organization/twilio-account', { apiKey, method: 'PUT', body: account });
  if (connected.status !== 200) throw new Error(`connecting the Twilio account failed: ${connected.status} ${JSON.stringify(connected.body)}`);
  return account;
}

/** Buys a number on the tenant's (fake) Twilio account and binds it to `agentId` through the API. */
export async function bindTenantNumber(
  server: Pick<TestServer, 'api'>,
  apiKey: string,
  twilio: FakeTwilioRestServer,
  account: TenantTwilioAccount,
  agentId: string,
  e164 = uniqueE164(),
): Promise<string> {
  twilio.addIncomingNumber(account.accountSid, e164);
  const bound = await server.api('/v1/phone-numbers', { apiKey, method: 'POST', body: { e164, agentId } });
  if (bound.status !== 201) throw new Error(`binding ${e164} failed: ${bound.status} ${JSON.stringify(bound.body)}`);
  return e164;
}
