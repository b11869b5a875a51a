import { FakeTwilioRestServer } from './fake-twilio-rest-server';
import type { FakeCallUpdate } from './fake-twilio-rest-types';

// Raw HTTP here (not twilio-node): the fake is checked against the wire format on its own.
describe('FakeTwilioRestServer', () => {
  let twilio: FakeTwilioRestServer;

  beforeEach(async () => {
    twilio = await FakeTwilioRestServer.start();
  });
  afterEach(async () => {
    await twilio.close();
  });

  function post(path: string, form: URLSearchParams, auth = `${twilio.accountSid}:${twilio.authToken}`): Promise<Response> {
    return fetch(`${twilio.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
  }

  const callsPath = (): string => `/2010-04-01/Accounts/${twilio.accountSid}/Calls.json`;
  const callPath = (sid: string): string => `/2010-04-01/Accounts/${twilio.accountSid}/Calls/${sid}.json`;

  it('creates a call and answers with a call resource under a fresh CA sid', async () => {
    const form = new URLSearchParams([
      ['To', '+15550002222'],
      ['From', '+15550001111'],
      ['Url', 'https://example.test/twiml'],
      ['StatusCallback', 'https://example.test/status'],
      ['StatusCallbackEvent', 'initiated'],
      ['StatusCallbackEvent', 'answered'],
      ['MachineDetection', 'Enable'],
    ]);
    const response = await post(callsPath(), form);
    const body = (await response.json()) as Record<string, unknown>;

    expect(response.status).toBe(201);
    expect(body).toMatchObject({
      account_sid: twilio.accountSid,
      to: '+15550002222',
      from: '+15550001111',
      status: 'queued',
      direction: 'outbound-api',
      api_version: '2010-04-01',
      uri: `/2010-04-01/Accounts/${twilio.accountSid}/Calls/${String(body.sid)}.json`,
    });
    expect(body.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(body.date_created).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    expect(twilio.call(String(body.sid))).toMatchObject({
      statusCallback: 'https://example.test/status',
      statusCallbackEvents: ['initiated', 'answered'],
      machineDetection: 'Enable',
    });
    expect(twilio.requests[0]).toMatchObject({ operation: 'create_call', status: 201, authorized: true, form: { StatusCallbackEvent: ['initiated', 'answered'] } });
  });

  it('answers 401 with Twilio\'s error body to wrong credentials, and records the attempt', async () => {
    const response = await post(callsPath(), new URLSearchParams({ To: '+1', From: '+2', Url: 'https://x' }), `${twilio.accountSid}:wrong`);

    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
    expect(twilio.requests[0]).toMatchObject({ authorized: false, status: 401 });
    expect(twilio.calls.size).toBe(0);
  });

  it('refuses a create without To, From or TwiML', async () => {
    const response = await post(callsPath(), new URLSearchParams({ From: '+15550001111', Url: 'https://x' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 21201 });
  });

  it('hangs up a live call, then answers 20404 for it like Twilio does for a call that is over', async () => {
    const call = twilio.addCall();
    const updates: FakeCallUpdate[] = [];
    twilio.onCallUpdate = (update) => void updates.push(update);

    const first = await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }));
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ sid: call.sid, status: 'completed' });
    expect(twilio.call(call.sid)?.status).toBe('completed');

    const second = await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }));
    expect(second.status).toBe(404);
    expect(await second.json()).toMatchObject({ code: 20404, message: `The requested resource ${callPath(call.sid)} was not found` });
    expect(updates.map((u) => [u.kind, u.call.status])).toEqual([['hang_up', 'completed']]);
  });

  it('redirects a live call to new TwiML and tells the hook', async () => {
    const call = twilio.addCall();
    const updated = new Promise<FakeCallUpdate>((resolve) => (twilio.onCallUpdate = resolve));

    const response = await post(callPath(call.sid), new URLSearchParams({ Twiml: '<Response><Dial>+15550003333</Dial></Response>' }));

    expect(response.status).toBe(200);
    const update = await updated;
    expect(update.kind).toBe('redirect');
    expect(update.call.twiml).toBe('<Response><Dial>+15550003333</Dial></Response>');
    expect(twilio.call(call.sid)?.status).toBe('in-progress');
  });

  it('answers 20404 for a call it does not know, unless told to accept unknown calls', async () => {
    const sid = 'CA' + 'b'.repeat(32);
    expect((await post(callPath(sid), new URLSearchParams({ Status: 'completed' }))).status).toBe(404);

    const lenient = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    try {
      const path = `/2010-04-01/Accounts/${lenient.accountSid}/Calls/${sid}.json`;
      const response = await fetch(`${lenient.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${lenient.accountSid}:${lenient.authToken}`).toString('base64')}` },
        body: new URLSearchParams({ Status: 'completed' }),
      });
      expect(response.status).toBe(200);
      expect(lenient.call(sid)?.status).toBe('completed');
    } finally {
      await lenient.close();
    }
  });

  it('injects queued failures in order, after the auth check', async () => {
    const call = twilio.addCall();
    twilio.failNext('update_call', 'server_error').failNext('update_call', { status: 429, code: 20429, message: 'Too Many Requests' });

    const unauthorized = await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }), 'AC0:bad');
    expect(unauthorized.status).toBe(401);
    expect((await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }))).status).toBe(500);
    expect((await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }))).status).toBe(429);
    expect((await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }))).status).toBe(200);
    expect(twilio.requestsFor('update_call').map((r) => r.status)).toEqual([401, 500, 429, 200]);
  });

  function get(path: string, auth = `${twilio.accountSid}:${twilio.authToken}`): Promise<Response> {
    return fetch(`${twilio.baseUrl}${path}`, { headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } });
  }

  it('answers an IncomingPhoneNumbers list in Twilio\'s list shape, filters and paging in the URIs', async () => {
    const sid = twilio.addIncomingNumber(twilio.accountSid, '+15550001111');
    const base = `/2010-04-01/Accounts/${twilio.accountSid}/IncomingPhoneNumbers.json`;

    const response = await get(`${base}?PhoneNumber=%2B15550001111&PageSize=1`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      incoming_phone_numbers: [expect.objectContaining({ sid, account_sid: twilio.accountSid, phone_number: '+15550001111', voice_url: '', status_callback: '' })],
      page: 0,
      page_size: 1,
      start: 0,
      end: 0,
      uri: `${base}?PhoneNumber=%2B15550001111&PageSize=1&Page=0`,
      first_page_uri: `${base}?PhoneNumber=%2B15550001111&PageSize=1&Page=0`,
      next_page_uri: null,
      previous_page_uri: null,
    });
    // An unencoded '+' arrives as a space: Twilio's filter then matches nothing, and so does the fake's.
    expect(await (await get(`${base}?PhoneNumber=+15550001111`)).json()).toMatchObject({ incoming_phone_numbers: [] });
    expect((await get(`${base}?PageSize=0`)).status).toBe(400);
  });

  it('answers 401 to one account\'s credentials on another\'s path, and 404 to an unknown resource', async () => {
    const other = twilio.addAccount({ accountSid: 'AC' + 'c'.repeat(32), authToken: 'd'.repeat(32) });
    expect(other).toEqual({ accountSid: 'AC' + 'c'.repeat(32), authToken: 'd'.repeat(32) });

    const crossed = await get(`/2010-04-01/Accounts/${other.accountSid}.json`);
    expect(crossed.status).toBe(401);
    expect(await crossed.json()).toMatchObject({ code: 20003, status: 401 });
    const own = await get(`/2010-04-01/Accounts/${other.accountSid}.json`, `${other.accountSid}:${other.authToken}`);
    const ownText = await own.text();
    expect(JSON.parse(ownText)).toMatchObject({ sid: other.accountSid, status: 'active', type: 'Full' });
    expect(ownText).not.toContain(other.authToken);
    expect((await get(`/2010-04-01/Accounts/${twilio.accountSid}/Queues.json`)).status).toBe(404);
    expect(twilio.requests.map((r) => [r.operation, r.accountSid, r.status])).toEqual([
      ['fetch_account', other.accountSid, 401],
      ['fetch_account', other.accountSid, 200],
      ['unknown', twilio.accountSid, 404],
    ]);
  });

  it('refuses to give a number to two accounts, or a call to an unknown account', () => {
    const other = twilio.addAccount();
    twilio.addIncomingNumber(twilio.accountSid, '+15550001111');
    expect(() => twilio.addIncomingNumber(other.accountSid, '+15550001111')).toThrow(/already belongs/);
    expect(() => twilio.addIncomingNumber(other.accountSid, '5550001111')).toThrow(/E\.164/);
    expect(() => twilio.addAccount({ accountSid: other.accountSid })).toThrow(/already has account/);
    expect(() => twilio.addCall({ accountSid: 'AC' + '9'.repeat(32) })).toThrow(/knows no account/);
    expect(twilio.removeIncomingNumber(other.accountSid, '+15550001111')).toBe(false);
    expect(twilio.removeIncomingNumber(twilio.accountSid, '+15550001111')).toBe(true);
    twilio.addIncomingNumber(other.accountSid, '+15550001111');
    expect(twilio.incomingNumber('+15550001111')?.accountSid).toBe(other.accountSid);
  });

  it('records a hook failure instead of failing the request', async () => {
    const call = twilio.addCall();
    twilio.onCallUpdate = () => {
      throw new Error('hook broke');
    };
    expect((await post(callPath(call.sid), new URLSearchParams({ Status: 'completed' }))).status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(twilio.hookErrors).toEqual([new Error('hook broke')]);
  });
});
