import type { FakeTwilioOperation } from './fake-twilio-rest-types';

/** What a request asks for, read from its method and path. */
export interface TwilioRestRoute {
  operation: FakeTwilioOperation;
  /** The AccountSid in the path (`/2010-04-01/Accounts/{AccountSid}...`), whatever the resource. */
  accountSid?: string;
  callSid?: string;
  phoneNumberSid?: string;
}

const ACCOUNT_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\.json$/;
const CALLS_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\.json$/;
const CALL_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\/([^/]+)\.json$/;
const NUMBERS_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/IncomingPhoneNumbers\.json$/;
const NUMBER_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/IncomingPhoneNumbers\/([^/]+)\.json$/;

/** The account a path is under, for any resource (so an unknown sub-resource still authenticates first). */
function pathAccountSid(path: string): string | undefined {
  const [, version, accounts, account] = path.split('/');
  if (version !== '2010-04-01' || accounts !== 'Accounts' || account === undefined || account === '') return undefined;
  return account.replace(/\.json$/, '');
}

export function routeRequest(method: string, path: string): TwilioRestRoute {
  const route: TwilioRestRoute = { operation: 'unknown', accountSid: pathAccountSid(path) };
  let match: RegExpExecArray | null;
  if (method === 'POST' && CALLS_PATH.test(path)) {
    route.operation = 'create_call';
  } else if ((match = CALL_PATH.exec(path)) !== null && (method === 'POST' || method === 'GET')) {
    route.operation = method === 'POST' ? 'update_call' : 'fetch_call';
    route.callSid = match[2];
  } else if (method === 'GET' && NUMBERS_PATH.test(path)) {
    route.operation = 'list_incoming_numbers';
  } else if (method === 'GET' && (match = NUMBER_PATH.exec(path)) !== null) {
    route.operation = 'fetch_incoming_number';
    route.phoneNumberSid = match[2];
  } else if (method === 'GET' && ACCOUNT_PATH.test(path)) {
    route.operation = 'fetch_account';
  }
  return route;
}

/** A form body or query string; a repeated key gives an array. */
export function parseParams(encoded: string): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(encoded)) {
    const previous = params[key];
    params[key] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return params;
}

/** One value of a field: the last, when the field was repeated. */
export function field(params: Record<string, string | string[]>, name: string): string | undefined {
  const value = params[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
}

export function fieldList(params: Record<string, string | string[]>, name: string): string[] {
  const value = params[name];
  if (value === undefined) return [];
  // twilio-node repeats the key; some clients send one space-separated value.
  return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(' ')).filter((v) => v.length > 0);
}
