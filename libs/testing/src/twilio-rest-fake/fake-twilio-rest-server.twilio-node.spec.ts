import { Twilio } from 'twilio';
import RestException from 'twilio/lib/base/RestException';
// The product's own redirecting httpClient, so the fake is checked against exactly what the product sends.
import { ApiBaseUrlRequestClient } from '../../../../apps/server/src/twilio/call-control/api-base-url-request-client';
import { FakeTwilioRestServer } from './fake-twilio-rest-server';

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function restException(promise: Promise<unknown>): Promise<RestException> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(RestException);
  return error as RestException;
}

// The real twilio-node client (v6) against the fake, several accounts at once.
describe('FakeTwilioRestServer with twilio-node', () => {
  let twilio: FakeTwilioRestServer;
  let owner: { accountSid: string; authToken: string };
  let other: { accountSid: string; authToken: string };

  const clientFor = (account: { accountSid: string; authToken: string }): Twilio =>
    new Twilio(account.accountSid, account.authToken, { httpClient: new ApiBaseUrlRequestClient(twilio.baseUrl) });

  beforeEach(async () => {
    twilio = await FakeTwilioRestServer.start();
    owner = twilio.addAccount();
    other = twilio.addAccount();
  });
  afterEach(async () => {
    await twilio.close();
  });

  it('lists an account\'s number by PhoneNumber, and only to its owner', async () => {
    const sid = twilio.addIncomingNumber(owner.accountSid, '+15550001111', { voiceUrl: 'https://example.test/voice' });
    twilio.addIncomingNumber(other.accountSid, '+15550002222');

    const listed = await clientFor(owner).incomingPhoneNumbers.list({ phoneNumber: '+15550001111', limit: 20 });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      sid,
      accountSid: owner.accountSid,
      phoneNumber: '+15550001111',
      friendlyName: '(555) 000-1111',
      voiceUrl: 'https://example.test/voice',
      uri: `/2010-04-01/Accounts/${owner.accountSid}/IncomingPhoneNumbers/${sid}.json`,
    });
    expect(listed[0]?.dateCreated).toBeInstanceOf(Date);
    expect(twilio.requestsFor('list_incoming_numbers')[0]).toMatchObject({
      accountSid: owner.accountSid,
      authorized: true,
      status: 200,
      query: { PhoneNumber: '+15550001111', PageSize: '20' },
    });

    // The other account owns a number, but not this one.
    expect(await clientFor(other).api.v2010.accounts(other.accountSid).incomingPhoneNumbers.list({ phoneNumber: '+15550001111' })).toEqual([]);
    expect(await clientFor(owner).incomingPhoneNumbers.list({ phoneNumber: '+15559999999', limit: 1 })).toEqual([]);
  });

  it('answers 401 / 20003 to another account\'s credentials, a wrong token and an unknown account', async () => {
    twilio.addIncomingNumber(owner.accountSid, '+15550001111');
    const onOwnersPath = clientFor(other).api.v2010.accounts(owner.accountSid).incomingPhoneNumbers.list({ phoneNumber: '+15550001111' });
    const wrongToken = clientFor({ accountSid: owner.accountSid, authToken: 'f'.repeat(32) }).incomingPhoneNumbers.list();
    const unknown = clientFor({ accountSid: 'AC' + '0'.repeat(32), authToken: owner.authToken }).api.v2010.account.fetch();

    for (const attempt of [onOwnersPath, wrongToken, unknown]) {
      expect(await restException(attempt)).toMatchObject({ status: 401, code: 20003 });
    }
    expect(twilio.requests.map((r) => [r.accountSid, r.authorized, r.status])).toEqual([
      [owner.accountSid, false, 401],
      [owner.accountSid, false, 401],
      ['AC' + '0'.repeat(32), false, 401],
    ]);
  });

  it('matches partial numbers as Twilio does, so an exact owner check must compare phone_number', async () => {
    twilio.addIncomingNumber(owner.accountSid, '+15550001111');
    twilio.addIncomingNumber(owner.accountSid, '+15550001112');

    const partial = await clientFor(owner).incomingPhoneNumbers.list({ phoneNumber: '+1555000111' });
    expect(partial.map((n) => n.phoneNumber)).toEqual(['+15550001111', '+15550001112']);
    const wildcard = await clientFor(owner).incomingPhoneNumbers.list({ phoneNumber: '+1555000111*' });
    expect(wildcard).toHaveLength(2);
  });

  it('pages with PageSize and Page, following next_page_uri the way list() does', async () => {
    const numbers = ['+15550000001', '+15550000002', '+15550000003'];
    for (const number of numbers) twilio.addIncomingNumber(owner.accountSid, number);
    const client = clientFor(owner);

    const all = await client.incomingPhoneNumbers.list({ pageSize: 2 });
    expect(all.map((n) => n.phoneNumber)).toEqual(numbers);
    expect(twilio.requestsFor('list_incoming_numbers').map((r) => r.query)).toEqual([
      { PageSize: '2' },
      { PageSize: '2', Page: '1', PageToken: `PA${all[1]?.sid}` },
    ]);

    // limit alone becomes the page size, and list() stops once it has enough.
    expect(await client.incomingPhoneNumbers.list({ limit: 1 })).toHaveLength(1);
    expect(twilio.requestsFor('list_incoming_numbers')).toHaveLength(3);

    const second = await client.api.v2010.accounts(owner.accountSid).incomingPhoneNumbers.page({ pageSize: 2, pageNumber: 1 });
    expect(second.instances.map((n) => n.phoneNumber)).toEqual(['+15550000003']);
    expect(second.nextPageUrl).toBeUndefined();
    expect(second.previousPageUrl).toContain('Page=0');
  });

  it('fetches one number of the account, and 404s another account\'s', async () => {
    const sid = twilio.addIncomingNumber(owner.accountSid, '+15550001111', { statusCallback: 'https://example.test/status' });

    const fetched = await clientFor(owner).incomingPhoneNumbers(sid).fetch();
    expect(fetched).toMatchObject({ sid, phoneNumber: '+15550001111', statusCallback: 'https://example.test/status', status: 'in-use' });
    expect(twilio.requestsFor('fetch_incoming_number')[0]).toMatchObject({ accountSid: owner.accountSid, phoneNumberSid: sid });

    expect(await restException(clientFor(other).incomingPhoneNumbers(sid).fetch())).toMatchObject({ status: 404, code: 20404 });
    expect(twilio.removeIncomingNumber(owner.accountSid, '+15550001111')).toBe(true);
    expect(await restException(clientFor(owner).incomingPhoneNumbers(sid).fetch())).toMatchObject({ status: 404 });
    expect(await clientFor(owner).incomingPhoneNumbers.list({ phoneNumber: '+15550001111' })).toEqual([]);
  });

  it('fetches the account, without its auth token', async () => {
    const account = await clientFor(owner).api.v2010.accounts(owner.accountSid).fetch();
    expect(account).toMatchObject({ sid: owner.accountSid, ownerAccountSid: owner.accountSid, status: 'active', type: 'Full' });
    expect(account.authToken).toBeUndefined();
    expect(account.dateCreated).toBeInstanceOf(Date);
    expect((await clientFor(other).api.v2010.account.fetch()).sid).toBe(other.accountSid);
    expect(twilio.requestsFor('fetch_account').map((r) => r.accountSid)).toEqual([owner.accountSid, other.accountSid]);
  });

  it('keeps calls to the account that created them', async () => {
    const created = await clientFor(owner).calls.create({ to: '+15550002222', from: '+15550001111', url: 'https://example.test/twiml' });
    expect(twilio.call(created.sid)?.accountSid).toBe(owner.accountSid);

    expect((await clientFor(owner).calls(created.sid).fetch()).status).toBe('queued');
    expect(await restException(clientFor(other).calls(created.sid).fetch())).toMatchObject({ status: 404, code: 20404 });
    expect(await restException(clientFor(other).calls(created.sid).update({ status: 'completed' }))).toMatchObject({ status: 404 });
    expect(twilio.call(created.sid)?.status).toBe('queued');
  });

  it('shows status changes made by the test through fetch', async () => {
    const call = twilio.addCall({ accountSid: other.accountSid });
    const client = clientFor(other);
    expect(await client.calls(call.sid).fetch()).toMatchObject({ sid: call.sid, accountSid: other.accountSid, status: 'in-progress', duration: null });

    twilio.setCallStatus(call.sid, 'completed', { duration: 42 });
    const ended = await client.calls(call.sid).fetch();
    expect(ended).toMatchObject({ status: 'completed', duration: '42' });
    expect(ended.endTime.getTime() - ended.startTime.getTime()).toBe(42_000);
  });

  it('answers injected failures on list, then lists again', async () => {
    twilio.addIncomingNumber(owner.accountSid, '+15550001111');
    twilio.failNext('list_incoming_numbers', 'server_error').failNext('list_incoming_numbers', 'connection_reset');
    twilio.failNext('fetch_account', { status: 429, code: 20429, message: 'Too Many Requests' });
    const client = clientFor(owner);

    expect(await restException(client.incomingPhoneNumbers.list({ phoneNumber: '+15550001111' }))).toMatchObject({ status: 500, code: 20500 });
    const dropped = await rejection(client.incomingPhoneNumbers.list({ phoneNumber: '+15550001111' }));
    expect(dropped).not.toBeInstanceOf(RestException);
    expect(await client.incomingPhoneNumbers.list({ phoneNumber: '+15550001111' })).toHaveLength(1);
    expect(twilio.requestsFor('list_incoming_numbers').map((r) => r.status)).toEqual([500, 0, 200]);
    expect(await restException(client.api.v2010.account.fetch())).toMatchObject({ status: 429, code: 20429 });
  });
});
