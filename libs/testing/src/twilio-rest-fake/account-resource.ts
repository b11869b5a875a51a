import { randomBytes } from 'node:crypto';
import { newSid } from '@switchboard/simulated-caller';
import { rfc2822 } from './call-resource';
import type { FakeAccount } from './fake-twilio-rest-types';

export interface FakeNewAccount {
  /** Default: a fresh AC sid. */
  accountSid?: string;
  /** Default: 32 random hex digits. */
  authToken?: string;
  /** Default: "My account <sid>". */
  friendlyName?: string;
}

/** Twilio's are AC + 32 hex digits; the fake only insists on what its routing needs. */
const ACCOUNT_SID = /^AC\w+$/;

export function newAccount(options: FakeNewAccount): FakeAccount {
  const sid = options.accountSid ?? newSid('AC');
  if (!ACCOUNT_SID.test(sid)) throw new Error(`fake Twilio: ${sid} is not an account SID (AC + letters and digits)`);
  const authToken = options.authToken ?? randomBytes(16).toString('hex');
  if (authToken.length === 0) throw new Error('fake Twilio: an auth token cannot be empty');
  return { sid, authToken, friendlyName: options.friendlyName ?? `My account ${sid}`, dateCreated: new Date() };
}

/** The `Authorization` header twilio-node sends for an account: HTTP Basic over "AccountSid:AuthToken". */
export function basicAuthorization(account: FakeAccount): string {
  return `Basic ${Buffer.from(`${account.sid}:${account.authToken}`).toString('base64')}`;
}

/**
 * The Account resource as Twilio answers a fetch. Twilio includes the auth_token; the fake leaves it
 * out on purpose, so nothing downstream can come to depend on reading a secret back.
 */
export function accountResource(account: FakeAccount): Record<string, unknown> {
  const base = `/2010-04-01/Accounts/${account.sid}`;
  return {
    sid: account.sid,
    owner_account_sid: account.sid,
    friendly_name: account.friendlyName,
    status: 'active',
    type: 'Full',
    date_created: rfc2822(account.dateCreated),
    date_updated: rfc2822(account.dateCreated),
    uri: `${base}.json`,
    subresource_uris: {
      calls: `${base}/Calls.json`,
      incoming_phone_numbers: `${base}/IncomingPhoneNumbers.json`,
      applications: `${base}/Applications.json`,
      addresses: `${base}/Addresses.json`,
      recordings: `${base}/Recordings.json`,
      messages: `${base}/Messages.json`,
    },
  };
}
