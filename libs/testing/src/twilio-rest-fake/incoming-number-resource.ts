import { randomBytes } from 'node:crypto';
import { rfc2822 } from './call-resource';
import type { FakeIncomingNumber, FakeIncomingNumberOptions, FakeTwilioError } from './fake-twilio-rest-types';
import { field } from './twilio-rest-routing';

const E164 = /^\+[1-9]\d{1,14}$/;
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
/** Query keys that page rather than filter. */
const PAGING_KEYS: ReadonlySet<string> = new Set(['PageSize', 'Page', 'PageToken']);

/** Twilio's display form of a number: "(555) 000-1111" for +1 numbers, the E.164 number otherwise. */
function displayForm(e164: string): string {
  const nanp = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(e164);
  return nanp === null ? e164 : `(${nanp[1]}) ${nanp[2]}-${nanp[3]}`;
}

export function newIncomingNumber(accountSid: string, e164: string, options: FakeIncomingNumberOptions): FakeIncomingNumber {
  if (!E164.test(e164)) throw new Error(`fake Twilio: ${e164} is not an E.164 number`);
  const now = new Date();
  return {
    sid: options.sid ?? `PN${randomBytes(16).toString('hex')}`,
    accountSid,
    phoneNumber: e164,
    friendlyName: options.friendlyName ?? displayForm(e164),
    voiceUrl: options.voiceUrl,
    voiceMethod: options.voiceMethod ?? 'POST',
    statusCallback: options.statusCallback,
    smsUrl: options.smsUrl,
    dateCreated: now,
    dateUpdated: now,
  };
}

export function incomingNumberPath(accountSid: string, sid: string): string {
  return `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${sid}.json`;
}

/** The IncomingPhoneNumber resource as Twilio's JSON API returns it (an unset URL is an empty string). */
export function incomingNumberResource(number: FakeIncomingNumber): Record<string, unknown> {
  return {
    sid: number.sid,
    account_sid: number.accountSid,
    phone_number: number.phoneNumber,
    friendly_name: number.friendlyName,
    date_created: rfc2822(number.dateCreated),
    date_updated: rfc2822(number.dateUpdated),
    api_version: '2010-04-01',
    beta: false,
    capabilities: { voice: true, sms: true, mms: true, fax: false },
    origin: 'twilio',
    status: 'in-use',
    address_requirements: 'none',
    address_sid: null,
    identity_sid: null,
    bundle_sid: null,
    emergency_status: 'Inactive',
    emergency_address_sid: null,
    emergency_address_status: 'unregistered',
    trunk_sid: null,
    voice_receive_mode: 'voice',
    voice_application_sid: '',
    voice_caller_id_lookup: false,
    voice_url: number.voiceUrl ?? '',
    voice_method: number.voiceMethod,
    voice_fallback_url: '',
    voice_fallback_method: 'POST',
    status_callback: number.statusCallback ?? '',
    status_callback_method: 'POST',
    sms_application_sid: '',
    sms_url: number.smsUrl ?? '',
    sms_method: 'POST',
    sms_fallback_url: '',
    sms_fallback_method: 'POST',
    uri: incomingNumberPath(number.accountSid, number.sid),
    subresource_uris: { assigned_add_ons: `/2010-04-01/Accounts/${number.accountSid}/IncomingPhoneNumbers/${number.sid}/AssignedAddOns.json` },
  };
}

/** Twilio's PhoneNumber filter: partial numbers match, and '*' stands for any one digit. */
function phoneNumberMatcher(filter: string): (phoneNumber: string) => boolean {
  const pattern = new RegExp(
    filter
      .split('')
      .map((c) => (c === '*' ? '\\d' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join(''),
  );
  return (phoneNumber) => pattern.test(phoneNumber);
}

/** A whole number within [min, max] from a query value, or undefined when it is not one. */
function integerParam(value: string | undefined, fallback: number, min: number, max: number): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

/**
 * One page of an account's numbers, in Twilio's list shape. Filters: PhoneNumber (partial, '*'
 * wildcard), FriendlyName (exact); Beta and Origin are accepted and ignored. Paging: PageSize
 * (default 50, at most 1000) and Page (from 0); PageToken is written into next/previous page URIs
 * as Twilio does but not needed to read them.
 */
export function incomingNumbersPage(
  accountSid: string,
  owned: readonly FakeIncomingNumber[],
  query: Record<string, string | string[]>,
): { page: Record<string, unknown> } | { error: FakeTwilioError } {
  const pageSize = integerParam(field(query, 'PageSize'), DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
  if (pageSize === undefined) return { error: { status: 400, code: 20001, message: `PageSize must be a whole number from 1 to ${MAX_PAGE_SIZE}` } };
  const page = integerParam(field(query, 'Page'), 0, 0, Number.MAX_SAFE_INTEGER);
  if (page === undefined) return { error: { status: 400, code: 20001, message: 'Page must be a whole number from 0' } };

  const phoneNumber = field(query, 'PhoneNumber');
  const friendlyName = field(query, 'FriendlyName');
  const matchesNumber = phoneNumber === undefined ? () => true : phoneNumberMatcher(phoneNumber);
  const matching = owned.filter(
    (n) => n.accountSid === accountSid && matchesNumber(n.phoneNumber) && (friendlyName === undefined || n.friendlyName === friendlyName),
  );
  const start = page * pageSize;
  const items = matching.slice(start, start + pageSize);

  const base = `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers.json`;
  const filters = Object.keys(query).filter((key) => !PAGING_KEYS.has(key));
  const pageUri = (n: number, pageToken?: string): string => {
    const params = new URLSearchParams(filters.map((key): [string, string] => [key, field(query, key) ?? '']));
    params.set('PageSize', String(pageSize));
    params.set('Page', String(n));
    if (pageToken !== undefined) params.set('PageToken', pageToken);
    return `${base}?${params.toString()}`;
  };
  const first = items[0];
  const last = items[items.length - 1];
  const body = {
    incoming_phone_numbers: items.map(incomingNumberResource),
    page,
    page_size: pageSize,
    start,
    end: items.length === 0 ? start : start + items.length - 1,
    uri: pageUri(page, field(query, 'PageToken')),
    first_page_uri: pageUri(0),
    next_page_uri: last !== undefined && matching.length > start + items.length ? pageUri(page + 1, `PA${last.sid}`) : null,
    previous_page_uri: page > 0 ? pageUri(page - 1, first === undefined ? undefined : `PB${first.sid}`) : null,
  };
  return { page: body };
}
