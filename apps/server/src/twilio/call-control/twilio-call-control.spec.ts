import { CallControlError } from '@switchboard/conversation';
import { type FakeCallUpdate, FakeTwilioRestServer } from '@switchboard/testing';
import { ApiBaseUrlRequestClient } from './api-base-url-request-client';
import { TwilioRestClientFactory } from './twilio-rest-client.factory';

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<CallControlError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CallControlError);
    return error as CallControlError;
  }
  throw new Error('expected a rejection');
}

// The real twilio-node client, pointed at a local fake of Twilio's REST API.
describe('TwilioCallControl with twilio-node against FakeTwilioRestServer', () => {
  let twilio: FakeTwilioRestServer;
  let factory: TwilioRestClientFactory;

  beforeEach(async () => {
    twilio = await FakeTwilioRestServer.start();
    factory = new TwilioRestClientFactory({ accountSid: twilio.accountSid, authToken: twilio.authToken, apiBaseUrl: twilio.baseUrl });
  });
  afterEach(async () => {
    await twilio.close();
  });

  it('hangs up by setting the call to completed, authenticated as the account', async () => {
    const call = twilio.addCall();

    await factory.callControl(call.sid).hangUp('caller said goodbye');

    expect(twilio.call(call.sid)?.status).toBe('completed');
    const [request] = twilio.requests;
    expect(twilio.requests).toHaveLength(1);
    expect(request).toMatchObject({
      operation: 'update_call',
      path: `/2010-04-01/Accounts/${twilio.accountSid}/Calls/${call.sid}.json`,
      form: { Status: 'completed' },
      authorized: true,
      status: 200,
    });
    expect(request?.headers['user-agent']).toMatch(/^twilio-node\/6\.2\.0/);
  });

  it('treats a call that is already over (HTTP 404 / 20404) as hung up', async () => {
    const call = twilio.addCall({ status: 'completed' });
    await expect(factory.callControl(call.sid).hangUp('idle')).resolves.toBeUndefined();

    const live = twilio.addCall();
    twilio.failNext('update_call', 'call_not_found');
    await expect(factory.callControl(live.sid).hangUp('idle')).resolves.toBeUndefined();
    expect(twilio.requestsFor('update_call').map((r) => r.status)).toEqual([404, 404]);
  });

  it('reports a Twilio 500 on hang-up as a CallControlError (the call is not over)', async () => {
    const call = twilio.addCall();
    twilio.failNext('update_call', 'server_error');

    const error = await rejection(factory.callControl(call.sid).hangUp('done'));

    expect(error.callAlreadyEnded).toBe(false);
    expect(error.message).toBe(`Twilio refused to hang up call ${call.sid}: HTTP 500 (code 20500): An internal server error has occurred`);
    expect(twilio.call(call.sid)?.status).toBe('in-progress');
  });

  it('transfers by replacing the call\'s TwiML with a <Dial> to the number', async () => {
    const call = twilio.addCall();
    // Twilio ends the media stream once the new TwiML takes over: the hook is where a test does that.
    const streamClosed = new Promise<FakeCallUpdate>((resolve) => (twilio.onCallUpdate = resolve));

    await factory.callControl(call.sid).transfer('+15550003333');

    const update = await streamClosed;
    expect(update.kind).toBe('redirect');
    expect(update.call.twiml).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial>+15550003333</Dial></Response>');
    expect(twilio.requests[0]?.form).toEqual({ Twiml: update.call.twiml });
  });

  it('rejects a transfer of a call that is over with callAlreadyEnded', async () => {
    const call = twilio.addCall({ status: 'completed' });

    const error = await rejection(factory.callControl(call.sid).transfer('+15550003333'));

    expect(error.callAlreadyEnded).toBe(true);
    expect(error.message).toMatch(/^Twilio refused to transfer call CA[0-9a-f]{32}: HTTP 404 \(code 20404\)/);
  });

  it('refuses a destination that is not an E.164 number without calling Twilio', async () => {
    const call = twilio.addCall();

    const error = await rejection(factory.callControl(call.sid).transfer('+1555</Dial><Play>http://x</Play>'));

    expect(error.message).toMatch(/must be an E\.164 number/);
    expect(twilio.requests).toHaveLength(0);
  });

  it('reports rejected credentials without revealing the auth token', async () => {
    const call = twilio.addCall();
    const wrongToken = 'f'.repeat(32);
    const misconfigured = new TwilioRestClientFactory({ accountSid: twilio.accountSid, authToken: wrongToken, apiBaseUrl: twilio.baseUrl });

    const error = await rejection(misconfigured.callControl(call.sid).hangUp('done'));

    expect(error.callAlreadyEnded).toBe(false);
    expect(error.message).toMatch(/HTTP 401 \(code 20003\)/);
    expect(error.message).not.toContain(wrongToken);
    expect(twilio.requests[0]?.authorized).toBe(false);
    expect(twilio.call(call.sid)?.status).toBe('in-progress');
  });

  it('reports an unreachable Twilio, keeping no request details (they hold the Authorization header)', async () => {
    const call = twilio.addCall();
    await twilio.close();

    const error = await rejection(factory.callControl(call.sid).hangUp('done'));

    expect(error.message).toBe(`could not reach Twilio to hang up call ${call.sid}: ECONNREFUSED`);
    expect(error.cause).toBeUndefined();
    twilio = await FakeTwilioRestServer.start(); // for afterEach
  });

  it('refuses something that is not a call SID before it reaches a URL path', () => {
    expect(() => factory.callControl('CA../../Messages')).toThrow(CallControlError);
  });
});

describe('TwilioRestClientFactory', () => {
  it('without credentials, still constructs but refuses to build a call control', () => {
    const factory = new TwilioRestClientFactory({ accountSid: undefined, authToken: undefined });
    expect(factory.isConfigured).toBe(false);
    expect(() => factory.callControl('CA' + '0'.repeat(32))).toThrow('Twilio call control needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN to be set');
  });

  it('rejects an unusable API base URL at construction', () => {
    const settings = { accountSid: 'AC' + '0'.repeat(32), authToken: 'x'.repeat(32) };
    expect(() => new TwilioRestClientFactory({ ...settings, apiBaseUrl: 'not a url' })).toThrow('TWILIO_API_BASE_URL is not an absolute URL');
    expect(() => new TwilioRestClientFactory({ ...settings, apiBaseUrl: 'ftp://127.0.0.1' })).toThrow('must be an http(s) URL');
    expect(() => new TwilioRestClientFactory({ ...settings, apiBaseUrl: 'http://127.0.0.1:1/?x=1' })).toThrow('query string');
  });

  it('treats Twilio\'s own API origin as no override (twilio-node\'s default HTTP client)', () => {
    const settings = { accountSid: 'AC' + '0'.repeat(32), authToken: 'x'.repeat(32) };
    const client = new TwilioRestClientFactory({ ...settings, apiBaseUrl: 'https://api.twilio.com/' }).restClient();
    expect(client.httpClient).not.toBeInstanceOf(ApiBaseUrlRequestClient);
    const redirected = new TwilioRestClientFactory({ ...settings, apiBaseUrl: 'http://127.0.0.1:9' }).restClient();
    expect(redirected.httpClient).toBeInstanceOf(ApiBaseUrlRequestClient);
  });

  it('keeps a redirected client away from every other Twilio host', async () => {
    const factory = new TwilioRestClientFactory({ accountSid: 'AC' + '0'.repeat(32), authToken: 'x'.repeat(32), apiBaseUrl: 'http://127.0.0.1:9' });
    const client = factory.restClient();
    await expect(client.request({ method: 'get', uri: 'https://voice.twilio.com/v1/Settings' })).rejects.toThrow(
      'only api.twilio.com requests can go to the configured Twilio API base URL, not voice.twilio.com',
    );
  });
});
