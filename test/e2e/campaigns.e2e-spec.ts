import { FakeTwilioRestServer } from '@switchboard/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { CampaignDialer } from '../../apps/server/src/campaigns/campaign-dialer';
import { Clock } from '../../apps/server/src/common/clock';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';
import { CampaignCallees } from '../support/campaign-callees';
import { openApiContract } from '../support/openapi-contract';
import { createOtherOrganizationKey, createRepositories, createScratchDatabase, createTestPrisma, uniqueE164, type ScratchDatabase } from '../support/database';
import { setUpLine, type OrganizationLine } from '../support/outbound-calls';
import { connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Outbound campaigns end to end: the real server (its dialer on, every 100 ms) on a database of its
 * own (its dialer and webhook worker take any organization's work), Twilio's REST API played by the
 * fake Twilio REST server, and the people called played by CampaignCallees on the fake: they pick
 * up, are busy, or hold, and Twilio's callbacks (status, TwiML) reach the server signed with the
 * organization's own account. The server's Clock is moved to a Monday morning, so calling windows
 * are read at a known local time whatever the day the test runs.
 */

const MONDAY_10_UTC = new Date('2026-12-07T10:00:00Z');
/** Los Angeles opens (09:00 local) at 17:00 UTC in December. */
const MONDAY_17_30_UTC = new Date('2026-12-07T17:30:00Z');
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const everyDay = (from: string, to: string) => Object.fromEntries(WEEKDAYS.map((day) => [day, [{ from, to }]]));

describe('outbound campaigns (e2e)', () => {
  let server: TestServer;
  let twilio: FakeTwilioRestServer;
  let database: ScratchDatabase;
  let prisma: PrismaService;
  let orgKey: string;
  let account: TenantTwilioAccount;
  let line: OrganizationLine;
  let callees: CampaignCallees;
  const receiver = new WebhookReceiver();

  const env = () => ({
    TWILIO_API_BASE_URL: twilio.baseUrl,
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    DATABASE_URL: database.url,
    MIGRATE_ON_START: 'true',
    CAMPAIGN_DIALER_ENABLED: 'true',
    CAMPAIGN_DIALER_INTERVAL_MS: '100',
    WEBHOOK_WORKER_ENABLED: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
  });
  /** A server whose clock reads `now` before its dialer's first tick. */
  const start = async (now: Date): Promise<TestServer> => {
    const started = await startTestServer(env(), { beforeListen: (app: NestExpressApplication) => app.get(Clock).travelTo(now) });
    twilio.deliverWebhooksTo(started.publicBaseUrl, started.serverUrl);
    return started;
  };

  beforeAll(async () => {
    await receiver.start();
    twilio = await FakeTwilioRestServer.start();
    database = await createScratchDatabase('campaigns');
    server = await start(MONDAY_10_UTC);
    prisma = createTestPrisma(2, database.url);
    orgKey = await createOtherOrganizationKey(createRepositories(prisma), 'campaigns');
    account = await connectTwilioAccount(server, orgKey, twilio);
    line = await setUpLine(server, orgKey, { engine: 'echo' }, { twilio, account });
    const subscription = await api('/v1/webhook-subscriptions', { method: 'POST', body: { url: receiver.url, events: ['campaign.completed'] } });
    expect(subscription.status).toBe(201);
    receiver.secret = subscription.body.secret;
    callees = new CampaignCallees(twilio, account, () => server);
    callees.start();
  }, 60_000);

  afterAll(async () => {
    await callees?.stop();
    await server?.close();
    await twilio?.close();
    await receiver.stop();
    await prisma?.$disconnect();
    await database?.drop();
  });

  afterEach(() => expect(callees.errors).toEqual([]));

  const api = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { apiKey: orgKey, ...init });
  const campaignBody = (contacts: unknown[], extra: object = {}) => ({
    name: 'December reminders',
    agentId: line.agentId,
    from: line.number,
    contacts,
    schedule: { timeZone: 'UTC', windows: everyDay('09:00', '17:00') },
    maxConcurrentCalls: 3,
    retry: { onBusy: true, onNoAnswer: true, maxAttempts: 3, delaySeconds: 1 },
    ...extra,
  });
  const progressOf = async (id: string) => (await api(`/v1/campaigns/${id}`)).body;
  async function contactsOf(id: string): Promise<any[]> {
    const items: any[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await api(`/v1/campaigns/${id}/contacts?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      items.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    return items;
  }
  const createsTo = (number: string) => twilio.requestsFor('create_call').filter((request) => request.form['To'] === number && request.status === 201);
  /**
   * Resolves once the dialer has made a whole pass begun after this call (the first tick joins a
   * pass already under way, the second is a fresh one), its calls placed: what a check that
   * something was NOT dialled must wait for.
   */
  const dialerHasPassed = async () => {
    const dialer = server.app.get(CampaignDialer);
    await dialer.tick();
    await dialer.tick();
  };

  it('dials 20 contacts 3 at a time, retries a busy line, waits for a contact\'s calling window, and survives a restart', async () => {
    const numbers = Array.from({ length: 20 }, () => uniqueE164());
    const [, mediaNumber, , , busyNumber] = numbers;
    const laNumber = numbers[19]!;
    callees.on(busyNumber!, 'busy', 'answer').on(mediaNumber!, 'media');
    const contacts = numbers.map((to, index) => ({
      to,
      variables: { name: `Contact ${index + 1}` },
      // 02:00 in Los Angeles now: outside its window until 17:00 UTC.
      ...(to === laNumber && { timeZone: 'America/Los_Angeles' }),
    }));
    const created = await api('/v1/campaigns', { method: 'POST', body: campaignBody(contacts) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'running', maxConcurrentCalls: 3, progress: { total: 20, byStatus: { pending: 20 } } });
    expect(created.body.schedule).toMatchObject({ timeZone: 'UTC', end: null, windows: everyDay('09:00', '17:00') });
    // No start given: the server's clock (Monday 10:00 UTC, moved on by the few seconds the test has run).
    expect(Date.parse(created.body.schedule.start) - MONDAY_10_UTC.getTime()).toBeLessThan(60_000);
    const id = created.body.id;

    // Mid-campaign, with calls ringing or answered: the server stops (gracefully) and another one
    // starts on the same database. Twilio's callbacks for the calls in flight then reach the new one.
    await eventually(() => progressOf(id), (campaign) => campaign.progress.byStatus.done >= 8 && callees.liveCalls().length > 0, 20_000);
    await callees.pause();
    const offsetMs = server.app.get(Clock).now().getTime() - Date.now();
    await server.close();
    expect(callees.liveCalls().length).toBeGreaterThan(0);
    server = await start(new Date(Date.now() + offsetMs));
    callees.resume();

    // Everyone in UTC is done; the Los Angeles contact waits for its window, never dialled.
    const waiting = await eventually(() => progressOf(id), (campaign) => campaign.progress.byStatus.done === 19, 30_000);
    expect(waiting).toMatchObject({ status: 'running', progress: { byStatus: { done: 19, pending: 1, dialing: 0 } } });
    await dialerHasPassed();
    expect(createsTo(laNumber)).toHaveLength(0);
    expect((await contactsOf(id)).find((contact) => contact.to === laNumber)).toMatchObject({ status: 'pending', attempts: 0, calls: [] });

    // 09:30 in Los Angeles: it is called, and the campaign completes.
    server.app.get(Clock).travelTo(MONDAY_17_30_UTC);
    const completed = await eventually(() => progressOf(id), (campaign) => campaign.status === 'completed', 20_000);
    expect(completed).toMatchObject({
      status: 'completed',
      statusReason: 'all_contacts_done',
      progress: { total: 20, byStatus: { done: 20, pending: 0, dialing: 0, cancelled: 0 }, byOutcome: { answered: 20, busy: 0 }, attempts: 21 },
    });

    // Every contact: exactly one call per attempt, attempts numbered 1..n, the busy one retried once.
    const listed = await contactsOf(id);
    expect(listed.map((contact) => contact.position)).toEqual(numbers.map((_, index) => index + 1));
    for (const contact of listed) {
      const attempts = contact.to === busyNumber ? 2 : 1;
      expect(contact).toMatchObject({ status: 'done', outcome: 'answered', attempts, variables: { name: `Contact ${contact.position}` } });
      expect(contact.calls.map((call: { attempt: number }) => call.attempt)).toEqual(Array.from({ length: attempts }, (_, index) => index + 1));
      // Twilio was asked once per attempt, for this contact's number, and never for the same call twice.
      expect(createsTo(contact.to)).toHaveLength(attempts);
    }
    expect(listed.find((contact) => contact.to === busyNumber)?.calls.map((call: { status: string }) => call.status)).toEqual(['busy', 'completed']);
    const createdCallIds = twilio
      .requestsFor('create_call')
      .filter((request) => numbers.includes(String(request.form['To'])))
      .map((request) => String(request.form['Url']).split('/').pop());
    expect(new Set(createdCallIds).size).toBe(21);
    expect(new Set(createdCallIds)).toEqual(new Set(listed.flatMap((contact) => contact.calls.map((call: { id: string }) => call.id))));
    // The media contact's call reached the echo agent through its stream.
    const mediaCall = listed.find((contact) => contact.to === mediaNumber)!.calls[0];
    expect((await api(`/v1/calls/${mediaCall.id}`)).body.streamStartedAt).toEqual(expect.any(String));

    // Never more than 3 at once, as the fake saw them created and ended (and 3 were reached).
    expect(callees.maxLiveAtOnce(new Set(numbers))).toBe(3);

    // The answers are the documented ones (the document the server serves, generated from the code).
    const contract = openApiContract(await (await fetch(`${server.serverUrl}/docs/openapi.json`)).json());
    contract.assertResponse('POST', '/v1/campaigns', 201, created.body);
    contract.assertResponse('GET', '/v1/campaigns/{id}', 200, completed);
    contract.assertResponse('GET', '/v1/campaigns', 200, (await api('/v1/campaigns')).body);
    contract.assertResponse('GET', '/v1/campaigns/{id}/contacts', 200, (await api(`/v1/campaigns/${id}/contacts`)).body);

    // campaign.completed, signed, with the counts.
    const event = await eventually(async () => receiver.received.find((request) => request.type === 'campaign.completed' && request.body.data.campaignId === id), (found) => found !== undefined, 10_000);
    expect(event).toMatchObject({ signatureValid: true, body: { data: { campaignId: id, status: 'completed', reason: 'all_contacts_done', contacts: 20, attempts: 21, cancelled: 0 } } });
    expect(event!.body.data.byOutcome).toEqual({ answered: 20, voicemail: 0, no_answer: 0, busy: 0, failed: 0 });
  }, 120_000);

  it('recovers attempts whose dialer died: one never placed is placed again once, one whose call is gone gets its outcome', async () => {
    const [unplaced, orphaned] = [uniqueE164(), uniqueE164()];
    const startsAt = new Date(server.app.get(Clock).now().getTime() + 3_600_000);
    const created = await api('/v1/campaigns', {
      method: 'POST',
      body: campaignBody([{ to: unplaced }, { to: orphaned }], { schedule: { timeZone: 'UTC', start: startsAt.toISOString(), windows: everyDay('00:00', '24:00') } }),
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const [first, second] = await prisma.campaignContact.findMany({ where: { campaignId: id }, orderBy: { position: 'asc' } });
    // A dialer claimed both and its process died: before writing the first one's call row, and after
    // writing the second one's, whose call then never got a CallSid (calls.create never answered).
    const expired = new Date(Date.now() - 1_000);
    await prisma.campaignContact.update({ where: { id: first!.id }, data: { status: 'dialing', attempts: 1, leaseUntil: expired } });
    await prisma.campaignContact.update({ where: { id: second!.id }, data: { status: 'dialing', attempts: 1, leaseUntil: expired } });
    const organizationId = (await prisma.campaign.findUniqueOrThrow({ where: { id } })).organizationId;
    const lost = await prisma.call.create({
      data: {
        organizationId, twilioAccountSid: account.accountSid, direction: 'outbound', fromNumber: line.number, toNumber: orphaned, status: 'queued',
        agentId: line.agentId, agentConfigVersion: 1, createdAt: new Date(Date.now() - 10 * 60_000), campaignContactId: second!.id, campaignAttempt: 1,
      },
    });

    // Recovered while the campaign waits for its start: the first is pending again, attempt uncounted.
    await eventually(() => contactsOf(id), (contacts) => contacts[0].status === 'pending' && contacts[1].status === 'done', 10_000);
    expect((await contactsOf(id))[1]).toMatchObject({ outcome: 'failed', attempts: 1, calls: [{ id: lost.id, attempt: 1 }] });

    server.app.get(Clock).travelTo(new Date(startsAt.getTime() + 1_000));
    const completed = await eventually(() => progressOf(id), (campaign) => campaign.status === 'completed', 15_000);
    expect(completed.progress).toMatchObject({ byOutcome: { answered: 1, failed: 1 }, attempts: 2 });
    expect((await contactsOf(id))[0]).toMatchObject({ status: 'done', outcome: 'answered', attempts: 1, calls: [{ attempt: 1, status: 'completed' }] });
    expect(createsTo(unplaced)).toHaveLength(1);
    expect(createsTo(orphaned)).toHaveLength(0);
  }, 60_000);

  it('pauses, resumes and cancels, letting calls in progress finish; contacts can come as CSV', async () => {
    const [held, second, never] = [uniqueE164(), uniqueE164(), uniqueE164()];
    callees.on(held, 'hold').on(second, 'hold');
    const csv = `to,timeZone,name\n${held},,Ann\n${second},Europe/Paris,"Bob, Jr"\n\n${never},,Cy\n`;
    const created = await api('/v1/campaigns', {
      method: 'POST',
      body: { ...campaignBody([], { maxConcurrentCalls: 1, schedule: { timeZone: 'UTC', windows: everyDay('00:00', '24:00') } }), contacts: undefined, contactsCsv: csv },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await contactsOf(id)).map(({ to, timeZone, variables }) => ({ to, timeZone, variables }))).toEqual([
      { to: held, timeZone: 'UTC', variables: { name: 'Ann' } },
      { to: second, timeZone: 'Europe/Paris', variables: { name: 'Bob, Jr' } },
      { to: never, timeZone: 'UTC', variables: { name: 'Cy' } },
    ]);
    await eventually(async () => createsTo(held).length, (count) => count === 1, 10_000);

    const paused = await api(`/v1/campaigns/${id}/pause`, { method: 'POST' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', statusReason: 'api', progress: { byStatus: { dialing: 1, pending: 2 } } });
    // The call in progress goes on and its outcome is recorded; nothing new is dialled while paused.
    callees.release(held);
    await eventually(() => contactsOf(id), (contacts) => contacts[0].status === 'done', 10_000);
    await dialerHasPassed();
    expect(createsTo(second)).toHaveLength(0);

    expect((await api(`/v1/campaigns/${id}/resume`, { method: 'POST' })).body).toMatchObject({ status: 'running', statusReason: null });
    await eventually(async () => createsTo(second).length, (count) => count === 1, 10_000);

    const cancelled = await api(`/v1/campaigns/${id}/cancel`, { method: 'POST' });
    const contract = openApiContract(await (await fetch(`${server.serverUrl}/docs/openapi.json`)).json());
    contract.assertResponse('POST', '/v1/campaigns/{id}/cancel', 200, cancelled.body);
    contract.assertResponse('POST', '/v1/campaigns/{id}/pause', 200, paused.body);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', statusReason: 'api', progress: { byStatus: { done: 1, dialing: 1, cancelled: 1 } } });
    for (const action of ['pause', 'resume']) {
      const refused = await api(`/v1/campaigns/${id}/${action}`, { method: 'POST' });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('campaign_finished');
    }
    callees.release(second);
    await eventually(() => contactsOf(id), (contacts) => contacts[1].status === 'done', 10_000);
    const after = await progressOf(id);
    expect(after).toMatchObject({ status: 'cancelled', completedAt: null, progress: { byStatus: { done: 2, cancelled: 1 }, byOutcome: { answered: 2 } } });
    expect(createsTo(never)).toHaveLength(0);
    expect(receiver.received.filter((request) => request.body.data.campaignId === id)).toEqual([]);
  }, 60_000);

  it('completes when its schedule ends, cancelling whoever was not called', async () => {
    const number = uniqueE164();
    const end = new Date(server.app.get(Clock).now().getTime() + 60_000);
    // Called on Sundays only: the server's clock is on a Monday.
    const created = await api('/v1/campaigns', {
      method: 'POST',
      body: campaignBody([{ to: number }], { schedule: { timeZone: 'UTC', end: end.toISOString(), windows: { sun: [{ from: '00:00', to: '24:00' }] } } }),
    });
    expect(created.status).toBe(201);
    server.app.get(Clock).travelTo(new Date(end.getTime() + 1_000));
    const completed = await eventually(() => progressOf(created.body.id), (campaign) => campaign.status === 'completed', 10_000);
    expect(completed).toMatchObject({ statusReason: 'schedule_ended', progress: { byStatus: { cancelled: 1 }, attempts: 0 } });
    const event = await eventually(async () => receiver.received.find((request) => request.body.data.campaignId === created.body.id), (found) => found !== undefined, 10_000);
    expect(event?.body.data).toMatchObject({ reason: 'schedule_ended', contacts: 1, cancelled: 1 });
    expect(createsTo(number)).toHaveLength(0);
  }, 30_000);

  it("stays within the organization's concurrency limit, and pauses when its hard budget is spent", async () => {
    const organization = (body: object) => api('/v1/organization', { method: 'PATCH', body });
    expect((await organization({ maxConcurrentCalls: 1 })).status).toBe(200);
    const numbers = [uniqueE164(), uniqueE164(), uniqueE164()];
    const allDay = { schedule: { timeZone: 'UTC', windows: everyDay('00:00', '24:00') } };
    const limited = await api('/v1/campaigns', { method: 'POST', body: campaignBody(numbers.map((to) => ({ to })), allDay) });
    await eventually(() => progressOf(limited.body.id), (campaign) => campaign.status === 'completed', 15_000);
    expect(callees.maxLiveAtOnce(new Set(numbers))).toBe(1);
    expect((await organization({ maxConcurrentCalls: null })).status).toBe(200);

    expect((await organization({ monthlyBudgetMicros: 0, budgetHardLimit: true })).status).toBe(200);
    const number = uniqueE164();
    const refused = await api('/v1/campaigns', { method: 'POST', body: campaignBody([{ to: number }], allDay) });
    const paused = await eventually(() => progressOf(refused.body.id), (campaign) => campaign.status === 'paused', 10_000);
    expect(paused).toMatchObject({ statusReason: 'budget_exceeded', progress: { byStatus: { pending: 1 }, attempts: 0 } });
    expect(createsTo(number)).toHaveLength(0);

    expect((await organization({ monthlyBudgetMicros: null, budgetHardLimit: false })).status).toBe(200);
    expect((await api(`/v1/campaigns/${refused.body.id}/resume`, { method: 'POST' })).status).toBe(200);
    await eventually(() => progressOf(refused.body.id), (campaign) => campaign.status === 'completed', 15_000);
    expect(createsTo(number)).toHaveLength(1);
  }, 60_000);

  describe('API', () => {
    const valid = () => campaignBody([{ to: uniqueE164() }, { to: uniqueE164() }]);

    it.each([
      ['an unknown schedule time zone', { schedule: { timeZone: 'Mars/Olympus', windows: everyDay('09:00', '17:00') } }, 'schedule.timeZone'],
      ['an unknown contact time zone', { contacts: [{ to: uniqueE164() }, { to: uniqueE164(), timeZone: 'Europe/Pariss' }] }, 'contacts.1.timeZone'],
      ['a window that ends before it starts', { schedule: { timeZone: 'UTC', windows: { mon: [{ from: '17:00', to: '09:00' }] } } }, 'schedule.windows.mon.0.to'],
      ['a window at 25:00', { schedule: { timeZone: 'UTC', windows: { tue: [{ from: '25:00', to: '26:00' }] } } }, 'schedule.windows.tue.0.from'],
      ['no window at all', { schedule: { timeZone: 'UTC', windows: {} } }, 'schedule.windows'],
      ['an end before the start', { schedule: { timeZone: 'UTC', windows: everyDay('09:00', '17:00'), start: '2030-01-02T00:00:00Z', end: '2030-01-01T00:00:00Z' } }, 'schedule.end'],
      ['an end in the past', { schedule: { timeZone: 'UTC', windows: everyDay('09:00', '17:00'), end: '2020-01-01T00:00:00Z' } }, 'schedule.end'],
      ['more than 10 000 contacts', { contacts: Array.from({ length: 10_001 }, (_, index) => ({ to: `+1555${String(index).padStart(7, '0')}` })) }, 'contacts'],
      ['the same number twice', { contacts: [{ to: '+15557770001' }, { to: '+15557770001' }] }, 'contacts.1.to'],
      ['a contact with 51 variables', { contacts: [{ to: uniqueE164(), variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])) }] }, 'contacts.0.variables'],
      ['both contacts and contactsCsv', { contactsCsv: 'to\n+15557770002\n' }, 'contacts'],
      ['neither contacts nor contactsCsv', { contacts: undefined }, 'contacts'],
      ['a CSV row with a bad number and one with a bad zone', { contacts: undefined, contactsCsv: 'to,timeZone\n+15557770003,UTC\n5550100,UTC\n+15557770004,Nowhere/City\n' }, 'contactsCsv.3.to'],
      ['a CSV row with an extra cell', { contacts: undefined, contactsCsv: 'to,name\n+15557770005,Ann\n+15557770006,Bob,extra\n' }, 'contactsCsv.3'],
      ['maxConcurrentCalls 0', { maxConcurrentCalls: 0 }, 'maxConcurrentCalls'],
      ['11 attempts', { retry: { maxAttempts: 11 } }, 'retry.maxAttempts'],
    ])('answers 400 naming the field for %s, creating nothing', async (_label, override, field) => {
      const before = await prisma.campaign.count();
      const answer = await api('/v1/campaigns', { method: 'POST', body: { ...valid(), ...override } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
      expect(await prisma.campaign.count()).toBe(before);
    });

    it('takes 10 000 contacts as CSV, a body over the general 256 KiB bound, in one short transaction', async () => {
      const rows = Array.from({ length: 10_000 }, (_, index) => `+1666${String(index).padStart(7, '0')},,Contact ${index}`);
      const later = { schedule: { timeZone: 'UTC', start: '2030-01-01T00:00:00Z', windows: everyDay('09:00', '17:00') } };
      const created = await api('/v1/campaigns', { method: 'POST', body: { ...campaignBody([], later), contacts: undefined, contactsCsv: `to,timeZone,name\n${rows.join('\n')}\n` } });
      expect(created.status).toBe(201);
      expect(created.body.progress).toMatchObject({ total: 10_000, byStatus: { pending: 10_000 } });
      const page = await api(`/v1/campaigns/${created.body.id}/contacts?limit=200&status=pending`);
      expect(page.body.data).toHaveLength(200);
      expect(page.body.data[199]).toMatchObject({ position: 200, to: '+16660000199', variables: { name: 'Contact 199' } });
      expect((await api(`/v1/campaigns/${created.body.id}/cancel`, { method: 'POST' })).body.progress.byStatus).toMatchObject({ cancelled: 10_000 });
    }, 30_000);

    it('names every bad CSV line, and refuses an agent, a number or a voicemail the organization cannot use', async () => {
      const csv = await api('/v1/campaigns', { method: 'POST', body: { ...valid(), contacts: undefined, contactsCsv: 'to,timeZone\n+15557770007,UTC\n5550100,UTC\n+15557770008,Nowhere/City\n' } });
      expect(csv.body.details).toEqual([
        expect.objectContaining({ field: 'contactsCsv.3.to', message: expect.stringMatching(/^line 3: must be an E\.164 number/) }),
        expect.objectContaining({ field: 'contactsCsv.4.timeZone', message: expect.stringMatching(/^line 4: must be an IANA time zone/) }),
      ]);
      const otherKey = await createOtherOrganizationKey(createRepositories(prisma), 'campaigns-foreign');
      const foreignAccount = await connectTwilioAccount(server, otherKey, twilio);
      const foreign = await setUpLine(server, otherKey, { engine: 'echo' }, { twilio, account: foreignAccount });
      expect((await api('/v1/campaigns', { method: 'POST', body: { ...valid(), agentId: foreign.agentId } })).body.code).toBe('agent_not_found');
      expect((await api('/v1/campaigns', { method: 'POST', body: { ...valid(), from: foreign.number } })).body.code).toBe('from_number_not_owned');
      const voicemail = await api('/v1/campaigns', { method: 'POST', body: { ...valid(), machineDetection: 'DetectMessageEnd', voicemail: { message: 'Call us back.' } } });
      expect(voicemail).toMatchObject({ status: 400, body: { code: 'voicemail_not_supported' } });

      // Another organization's campaign is a 404 for every route; read keys read, never write.
      const mine = await api('/v1/campaigns', { method: 'POST', body: campaignBody([{ to: uniqueE164() }], { schedule: { timeZone: 'UTC', start: '2030-01-01T00:00:00Z', windows: everyDay('09:00', '17:00') } }) });
      expect(mine.status).toBe(201);
      for (const [path, method] of [[``, 'GET'], ['/contacts', 'GET'], ['/pause', 'POST'], ['/resume', 'POST'], ['/cancel', 'POST']] as const) {
        const answer = await server.api(`/v1/campaigns/${mine.body.id}${path}`, { apiKey: otherKey, method });
        expect(answer.status).toBe(404);
        expect(answer.body.code).toBe('campaign_not_found');
      }
      expect((await server.api('/v1/campaigns', { apiKey: otherKey })).body.data).toEqual([]);
      const reader = await api('/v1/api-keys', { method: 'POST', body: { name: 'campaign reader', scopes: ['read'] } });
      expect((await server.api('/v1/campaigns', { apiKey: reader.body.key, method: 'POST', body: valid() })).status).toBe(403);
      expect((await server.api(`/v1/campaigns/${mine.body.id}/cancel`, { apiKey: reader.body.key, method: 'POST' })).status).toBe(403);
      expect((await server.api(`/v1/campaigns/${mine.body.id}`, { apiKey: reader.body.key })).status).toBe(200);
      expect((await server.api('/v1/campaigns', { apiKey: null })).status).toBe(401);

      // The list pages newest first.
      const page = await api('/v1/campaigns?limit=2');
      expect(page.body.data[0].id).toBe(mine.body.id);
      const next = await api(`/v1/campaigns?limit=2&cursor=${page.body.nextCursor}`);
      expect(next.body.data).toHaveLength(2);
      expect(next.body.data.map((campaign: { id: string }) => campaign.id)).not.toContain(mine.body.id);
      expect((await api(`/v1/campaigns/${mine.body.id}/cancel`, { method: 'POST' })).body.status).toBe('cancelled');
    }, 30_000);
  });
});
