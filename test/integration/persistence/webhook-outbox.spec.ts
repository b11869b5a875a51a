import { ConversationRecordRepository } from '../../../libs/persistence/src/repositories/conversation-record.repository';
import { WebhookDeliveryRepository } from '../../../libs/persistence/src/webhooks/webhook-delivery.repository';
import type { WebhookEventType } from '../../../libs/persistence/src/webhooks/webhook-event-types';
import { enqueueWebhookEvent, WebhookOutbox } from '../../../libs/persistence/src/webhooks/webhook-outbox';
import { WebhookSubscriptionRepository } from '../../../libs/persistence/src/webhooks/webhook-subscription.repository';
import { nextStateAfterFailure } from '../../../apps/server/src/webhooks/webhook-retry-schedule';
import { createRepositories, createTestOrganization, createTestPrisma, TEST_ACCOUNT_SID, uniqueE164 } from '../../support/database';
import { eventually } from '../../support/eventually';
import { createInboundCall } from './call-fixtures';

const GIVE_UP_AFTER_MS = 3_600_000;

describe('Webhook outbox (transactional enqueue, claim, attempts, replay, emitted events)', () => {
  const prisma = createTestPrisma(10);
  const repos = createRepositories(prisma);
  const outbox = new WebhookOutbox({ giveUpAfterMs: GIVE_UP_AFTER_MS });
  const subscriptions = new WebhookSubscriptionRepository(prisma);
  const deliveries = new WebhookDeliveryRepository(prisma, outbox);
  const records = new ConversationRecordRepository(prisma, outbox);

  afterAll(() => prisma.$disconnect());

  const newOrganization = async () => (await createTestOrganization(repos, 'webhooks')).id;
  const subscribe = (organizationId: string, events: WebhookEventType[], url = 'https://receiver.example/hooks') =>
    subscriptions.create({ organizationId, url, events });
  const eventsOf = (organizationId: string, type?: WebhookEventType) =>
    prisma.webhookEvent.findMany({ where: { organizationId, ...(type && { type }) }, orderBy: { createdAt: 'asc' }, include: { deliveries: true } });
  const enqueue = (organizationId: string, type: WebhookEventType = 'call.ended', data: Record<string, unknown> = { n: 1 }) =>
    prisma.$transaction((tx) => enqueueWebhookEvent(tx, { organizationId, type, data: data as never }, { giveUpAfterMs: GIVE_UP_AFTER_MS }));
  /** Claims everything due (other tests' rows too) and keeps this organization's. */
  const claimOwn = async (organizationId: string) => (await deliveries.claimDue(1_000, 60_000)).filter((row) => row.organizationId === organizationId);

  describe('enqueue', () => {
    it('writes nothing when the transaction rolls back', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      const failed = prisma.$transaction(async (tx) => {
        await enqueueWebhookEvent(tx, { organizationId, type: 'call.ended', data: { callId: 'x' } }, { giveUpAfterMs: GIVE_UP_AFTER_MS });
        throw new Error('the change failed');
      });
      await expect(failed).rejects.toThrow('the change failed');
      expect(await eventsOf(organizationId)).toEqual([]);
      expect(await prisma.webhookDelivery.count({ where: { organizationId } })).toBe(0);
    });

    it('fans out to the live subscriptions of the organization that asked for the type, and to nobody else', async () => {
      const organizationId = await newOrganization();
      const both = await subscribe(organizationId, ['call.started', 'call.ended']);
      const endedOnly = await subscribe(organizationId, ['call.ended']);
      const startedOnly = await subscribe(organizationId, ['call.started']);
      const deleted = await subscribe(organizationId, ['call.ended']);
      expect(await subscriptions.delete(organizationId, deleted.id)).toBe(true);
      const otherOrganization = await newOrganization();
      await subscribe(otherOrganization, ['call.ended']);

      const before = Date.now();
      expect(await enqueue(organizationId, 'call.ended', { callId: 'c-1' })).toBe(2);
      const [event, ...more] = await eventsOf(organizationId);
      expect(more).toEqual([]);
      expect(event!.type).toBe('call.ended');
      expect(event!.payload).toEqual({ type: 'call.ended', timestamp: expect.any(String), data: { callId: 'c-1' } });
      expect(event!.deliveries.map((d) => d.subscriptionId).sort()).toEqual([both.id, endedOnly.id].sort());
      expect(event!.deliveries.map((d) => d.subscriptionId)).not.toContain(startedOnly.id);
      for (const delivery of event!.deliveries) {
        expect(delivery).toMatchObject({ status: 'pending', attemptCount: 0, lockedUntil: null, organizationId });
        expect(delivery.giveUpAfter.getTime()).toBeGreaterThanOrEqual(before + GIVE_UP_AFTER_MS - 1_000);
      }
      expect(await eventsOf(otherOrganization)).toEqual([]);
    });

    it('writes no event at all when no subscription wants it', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.started']);
      expect(await enqueue(organizationId, 'transcript.turn')).toBe(0);
      expect(await eventsOf(organizationId)).toEqual([]);
    });
  });

  describe('claimDue', () => {
    it('two concurrent claimers never get the same delivery (FOR UPDATE SKIP LOCKED), and a claimed one is leased', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      await subscribe(organizationId, ['call.ended']);
      for (let n = 0; n < 20; n++) await enqueue(organizationId, 'call.ended', { n });
      const [first, second] = await Promise.all([deliveries.claimDue(1_000, 60_000), deliveries.claimDue(1_000, 60_000)]);
      const firstIds = new Set(first.map((row) => row.deliveryId));
      expect(second.filter((row) => firstIds.has(row.deliveryId))).toEqual([]);
      const mine = [...first, ...second].filter((row) => row.organizationId === organizationId);
      expect(mine).toHaveLength(40);
      expect(new Set(mine.map((row) => row.deliveryId)).size).toBe(40);
      expect(mine[0]).toMatchObject({ attemptNumber: 1, url: 'https://receiver.example/hooks', secret: expect.stringMatching(/^whsec_/) });
      // Leased: nobody claims them again until the lease runs out.
      expect(await claimOwn(organizationId)).toEqual([]);
    });

    it('a fair claim takes each subscription\'s oldest deliveries up to its share minus what it has in flight', async () => {
      const organizationId = await newOrganization();
      // A has a backlog (a receiver that is down, say); B's deliveries came later.
      const backlogged = await subscribe(organizationId, ['call.ended']);
      const other = await subscribe(organizationId, ['call.started']);
      for (let n = 0; n < 10; n++) await enqueue(organizationId, 'call.ended', { n });
      for (let n = 0; n < 3; n++) await enqueue(organizationId, 'call.started', { n });
      const oldest = await prisma.webhookDelivery.findMany({ where: { subscriptionId: backlogged.id }, orderBy: { nextAttemptAt: 'asc' } });

      const fairlyOwn = async (inFlight: Record<string, number>) =>
        (await deliveries.claimDue(1_000, 60_000, { perSubscription: 2, inFlight: new Map(Object.entries(inFlight)) })).filter((row) => row.organizationId === organizationId);
      const first = await fairlyOwn({ [backlogged.id]: 1 });
      expect(first.filter((row) => row.subscriptionId === backlogged.id).map((row) => row.deliveryId)).toEqual([oldest[0]!.id]);
      expect(first.filter((row) => row.subscriptionId === other.id)).toHaveLength(2);
      // Both at their share: nothing more for either.
      expect(await fairlyOwn({ [backlogged.id]: 2, [other.id]: 2 })).toEqual([]);
      // An unfair claim (no fairness given) still takes everything left: 9 of A, 1 of B.
      const rest = await claimOwn(organizationId);
      expect(rest.filter((row) => row.subscriptionId === backlogged.id)).toHaveLength(9);
      expect(rest.filter((row) => row.subscriptionId === other.id)).toHaveLength(1);
    });

    it('a fair claim also caps each organization, however many subscriptions it spreads its backlog over', async () => {
      const organizationId = await newOrganization();
      // One organization, five subscriptions each with a backlog: per subscription alone it would take 10 slots.
      const subscriptions = [];
      for (let n = 0; n < 5; n++) subscriptions.push(await subscribe(organizationId, ['call.ended']));
      for (let n = 0; n < 3; n++) await enqueue(organizationId, 'call.ended', { n });
      const claimOwnFairly = async (inFlightByOrganization: Record<string, number>) =>
        (
          await deliveries.claimDue(1_000, 60_000, {
            perSubscription: 2,
            inFlight: new Map(),
            perOrganization: 4,
            inFlightByOrganization: new Map(Object.entries(inFlightByOrganization)),
          })
        ).filter((row) => row.organizationId === organizationId);
      const first = await claimOwnFairly({ [organizationId]: 1 });
      // Its share of 4 minus the 1 it has in flight, oldest first; no subscription over its own share.
      expect(first).toHaveLength(3);
      for (const subscription of subscriptions) expect(first.filter((row) => row.subscriptionId === subscription.id).length).toBeLessThanOrEqual(2);
      expect(await claimOwnFairly({ [organizationId]: 4 })).toEqual([]);
      // Without the organization's cap the rest is still there to take (nothing was lost by the filter).
      expect(await claimOwn(organizationId)).toHaveLength(15 - 3);
    });

    it('claims again once a lease has run out (a crashed worker loses nothing)', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      await enqueue(organizationId);
      const [claimed] = (await deliveries.claimDue(1_000, 1)).filter((row) => row.organizationId === organizationId);
      expect(claimed).toBeDefined();
      // The lease is judged by the database's clock: wait until, by that clock, it has run out.
      const leaseRunOut = async () => {
        const [{ now }] = await prisma.$queryRaw<[{ now: Date }]>`SELECT now()`;
        const { lockedUntil } = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: claimed!.deliveryId }, select: { lockedUntil: true } });
        return lockedUntil !== null && lockedUntil < now;
      };
      await eventually(leaseRunOut, (runOut) => runOut);
      expect((await claimOwn(organizationId)).map((row) => row.deliveryId)).toEqual([claimed!.deliveryId]);
    });
  });

  describe('recordAttempt', () => {
    const attempt = (deliveryId: string, attemptNumber: number, next: Parameters<WebhookDeliveryRepository['recordAttempt']>[0]['next'], statusCode: number | null = 500) =>
      deliveries.recordAttempt({
        deliveryId,
        attemptNumber,
        startedAt: new Date(),
        statusCode,
        latencyMs: 12.5,
        error: statusCode === null ? 'connection_error: ECONNREFUSED' : null,
        responseExcerpt: statusCode === null ? null : 'oops',
        next,
      });

    it('logs each attempt and moves the delivery: retry scheduled, then delivered', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      await enqueue(organizationId);
      const [claimed] = await claimOwn(organizationId);
      const retryAt = new Date(Date.now() + 60_000);
      expect(await attempt(claimed!.deliveryId, 1, { status: 'pending', nextAttemptAt: retryAt }, null)).toBe(true);
      let detail = await deliveries.findDetail(organizationId, claimed!.deliveryId);
      expect(detail).toMatchObject({ status: 'pending', attemptCount: 1, lastStatusCode: null, lastError: 'connection_error: ECONNREFUSED', nextAttemptAt: retryAt });
      expect(await prisma.webhookDelivery.findUnique({ where: { id: claimed!.deliveryId }, select: { lockedUntil: true } })).toEqual({ lockedUntil: null });
      // Not due before its retry time.
      expect(await claimOwn(organizationId)).toEqual([]);

      await prisma.webhookDelivery.update({ where: { id: claimed!.deliveryId }, data: { nextAttemptAt: new Date(Date.now() - 1) } });
      const [again] = await claimOwn(organizationId);
      expect(again!.attemptNumber).toBe(2);
      expect(await attempt(again!.deliveryId, 2, { status: 'delivered' }, 204)).toBe(true);
      detail = await deliveries.findDetail(organizationId, claimed!.deliveryId);
      expect(detail).toMatchObject({ status: 'delivered', attemptCount: 2, lastStatusCode: 204, deliveredAt: expect.any(Date) });
      expect(detail!.attempts).toEqual([
        { attemptNumber: 1, startedAt: expect.any(Date), statusCode: null, latencyMs: 12.5, error: 'connection_error: ECONNREFUSED', responseExcerpt: null },
        { attemptNumber: 2, startedAt: expect.any(Date), statusCode: 204, latencyMs: 12.5, error: null, responseExcerpt: 'oops' },
      ]);
      // A second worker recording the same attempt (its lease ran out meanwhile) changes nothing.
      expect(await attempt(again!.deliveryId, 2, { status: 'failed' })).toBe(false);
      expect((await deliveries.findDetail(organizationId, claimed!.deliveryId))!.attempts).toHaveLength(2);
    });

    it('marks the delivery failed when an attempt fails after giveUpAfter, and it is never claimed again', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      await enqueue(organizationId);
      await prisma.webhookDelivery.updateMany({ where: { organizationId }, data: { giveUpAfter: new Date(Date.now() - 1_000) } });
      const [claimed] = await claimOwn(organizationId);
      const next = nextStateAfterFailure({ attemptNumber: 1, now: new Date(), giveUpAfter: claimed!.giveUpAfter, schedule: { baseMs: 10, maxDelayMs: 100 } });
      expect(next).toEqual({ status: 'failed' });
      expect(await attempt(claimed!.deliveryId, 1, next, 503)).toBe(true);
      expect(await deliveries.findDetail(organizationId, claimed!.deliveryId)).toMatchObject({ status: 'failed', failedAt: expect.any(Date), lastStatusCode: 503 });
      await prisma.webhookDelivery.update({ where: { id: claimed!.deliveryId }, data: { nextAttemptAt: new Date(Date.now() - 1) } });
      expect(await claimOwn(organizationId)).toEqual([]);
    });
  });

  describe('list, detail and replay', () => {
    it('replays as a new delivery of the same event (same webhook-id), scoped to the organization', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      await enqueue(organizationId);
      const [original] = (await deliveries.list({ organizationId, limit: 10 })).items;
      const otherOrganization = await newOrganization();
      expect(await deliveries.replay(otherOrganization, original!.id)).toBeNull();
      expect(await deliveries.findDetail(otherOrganization, original!.id)).toBeNull();

      let woken = 0;
      const stop = outbox.onCommitted(() => woken++);
      const replay = await deliveries.replay(organizationId, original!.id);
      stop();
      expect(woken).toBe(1);
      expect(replay).toMatchObject({ eventId: original!.eventId, replayOfId: original!.id, status: 'pending', attemptCount: 0 });
      expect(replay!.id).not.toBe(original!.id);
      const page = await deliveries.list({ organizationId, limit: 10 });
      expect(page.items.map((d) => d.id)).toEqual([replay!.id, original!.id]);
    });

    it('pages newest first with a cursor and filters by status, event type and subscription', async () => {
      const organizationId = await newOrganization();
      const a = await subscribe(organizationId, ['call.started', 'call.ended']);
      const b = await subscribe(organizationId, ['call.ended']);
      await enqueue(organizationId, 'call.started');
      await enqueue(organizationId, 'call.ended');
      await enqueue(organizationId, 'call.ended');
      const first = await deliveries.list({ organizationId, limit: 2 });
      const second = await deliveries.list({ organizationId, limit: 2, cursor: first.nextCursor });
      const third = await deliveries.list({ organizationId, limit: 2, cursor: second.nextCursor });
      const all = [...first.items, ...second.items, ...third.items];
      expect(all).toHaveLength(5);
      expect(third.nextCursor).toBeNull();
      expect(new Set(all.map((d) => d.id)).size).toBe(5);
      expect((await deliveries.list({ organizationId, limit: 10, filters: { eventType: 'call.started' } })).items.map((d) => d.subscriptionId)).toEqual([a.id]);
      expect((await deliveries.list({ organizationId, limit: 10, filters: { subscriptionId: b.id } })).items).toHaveLength(2);
      expect((await deliveries.list({ organizationId, limit: 10, filters: { status: 'delivered' } })).items).toEqual([]);
    });
  });

  describe('events emitted by the repositories, in the same transaction as the change', () => {
    const t = (second: number) => new Date(Date.UTC(2030, 4, 1, 12, 0, second));
    const allTypes: WebhookEventType[] = ['call.started', 'call.answered', 'call.ended', 'transcript.turn', 'tool.invoked'];

    it('call.started from createInbound, with the call in the envelope', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, allTypes);
      const { callId, input } = await createInboundCall(repos, { organizationId });
      const [event, ...more] = await eventsOf(organizationId);
      expect(more).toEqual([]);
      expect(event).toMatchObject({ type: 'call.started', callId });
      expect(event!.payload).toEqual({
        type: 'call.started',
        timestamp: expect.any(String),
        data: expect.objectContaining({ callId, direction: 'inbound', from: input.fromNumber, to: input.toNumber, status: 'ringing', endedAt: null }),
      });
      expect(JSON.stringify(event!.payload)).not.toContain(input.streamTokenHash);
    });

    it('call.started when an outbound call is admitted, and call.ended once when Twilio refused to place it', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, allTypes);
      const { calls, admission: admissions, callEnds } = createRepositories(prisma, { outbox });
      const agent = await repos.agents.create({ organizationId, name: 'outbound', engine: 'echo', config: {} });
      const admission = await admissions.reserveOutbound({
        organizationId,
        agentId: agent.id,
        agentConfigVersion: 1,
        twilioAccountSid: TEST_ACCOUNT_SID,
        fromNumber: uniqueE164(),
        toNumber: uniqueE164(),
        variables: { order: '4567' },
        machineDetection: null,
      });
      if (!admission.admitted) throw new Error('expected the call to be admitted');
      const callId = admission.call.id;
      expect((await eventsOf(organizationId)).map((event) => [event.type, event.callId])).toEqual([['call.started', callId]]);

      await calls.markOutboundFailed(callId, t(1));
      expect(await callEnds.finalise(callId, { endReason: 'twilio_error', endedAt: t(1) })).toBe(true);
      expect(await callEnds.finalise(callId, { endReason: 'twilio_error', endedAt: t(2) })).toBe(false);
      const events = await eventsOf(organizationId);
      expect(events.map((event) => event.type)).toEqual(['call.started', 'call.ended']);
      expect(events[1]!.payload).toMatchObject({ data: { callId, direction: 'outbound', status: 'failed', endReason: 'twilio_error' } });
    });

    it('call.answered once, even when in-progress arrives twice', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.answered']);
      const { callId, callSid } = await createInboundCall(repos, { organizationId });
      await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'ringing', sequenceNumber: 0, at: t(0) });
      await Promise.all([
        repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', sequenceNumber: 1, at: t(2) }),
        repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', sequenceNumber: 1, at: t(2) }),
      ]);
      const events = await eventsOf(organizationId, 'call.answered');
      expect(events).toHaveLength(1);
      expect((events[0]!.payload as { data: unknown }).data).toMatchObject({ callId, status: 'in-progress', answeredAt: t(2).toISOString() });
    });

    it('call.ended exactly once when finalise comes first and Twilio\'s completed follows', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      const { callId, callSid } = await createInboundCall(repos, { organizationId });
      await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', sequenceNumber: 1, at: t(1) });
      expect(await repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: t(30) })).toBe(true);
      expect(await repos.callEnds.finalise(callId, { endReason: 'again', endedAt: t(31) })).toBe(false);
      await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', sequenceNumber: 2, callDurationSeconds: 29, at: t(31) });
      const events = await eventsOf(organizationId, 'call.ended');
      expect(events).toHaveLength(1);
      expect((events[0]!.payload as { data: unknown }).data).toMatchObject({ callId, endReason: 'caller_hangup', endedAt: t(30).toISOString() });
    });

    it('call.ended exactly once when Twilio\'s completed comes first and finalise follows', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      const { callId, callSid } = await createInboundCall(repos, { organizationId });
      await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', sequenceNumber: 2, callDurationSeconds: 40, at: t(40) });
      await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', sequenceNumber: 2, callDurationSeconds: 40, at: t(40) });
      expect(await repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: t(41) })).toBe(true);
      const events = await eventsOf(organizationId, 'call.ended');
      expect(events).toHaveLength(1);
      expect((events[0]!.payload as { data: unknown }).data).toMatchObject({ callId, status: 'completed', durationSeconds: 40, endReason: null });
    });

    it('call.ended exactly once when finalise and the terminal callback race', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['call.ended']);
      const calls = await Promise.all(Array.from({ length: 5 }, () => createInboundCall(repos, { organizationId })));
      await Promise.all(
        calls.flatMap(({ callId, callSid }) => [
          repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: t(10) }),
          repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', sequenceNumber: 3, at: t(11) }),
        ]),
      );
      const events = await eventsOf(organizationId, 'call.ended');
      expect(events.map((event) => event.callId).sort()).toEqual(calls.map((call) => call.callId).sort());
    });

    it('transcript.turn per inserted turn; a retried batch emits nothing twice', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['transcript.turn']);
      const { callId } = await createInboundCall(repos, { organizationId });
      const turn = (index: number) => ({ index, role: 'user' as const, source: 'speech' as const, text: `turn ${index}`, heardText: null, interrupted: false, startMs: index * 1000, endMs: index * 1000 + 500 });
      await records.appendTranscriptTurns(callId, [turn(0), turn(1)]);
      await records.appendTranscriptTurns(callId, [turn(0), turn(1), turn(2)]);
      const events = await eventsOf(organizationId, 'transcript.turn');
      const indexes = events.map((event) => (event.payload as { data: { index: number } }).data.index).sort();
      expect(indexes).toEqual([0, 1, 2]);
      expect((events[0]!.payload as { data: unknown }).data).toMatchObject({ callId, role: 'user', text: expect.stringMatching(/^turn /) });
    });

    it('tool.invoked per invocation, and nothing when the call is missing', async () => {
      const organizationId = await newOrganization();
      await subscribe(organizationId, ['tool.invoked']);
      const { callId } = await createInboundCall(repos, { organizationId });
      const invocation = (toolCallId: string) => ({ toolCallId, name: 'lookup_order', arguments: { orderId: 'A-1' }, result: { status: 'shipped' }, error: null, startedAtMs: 100, latencyMs: 5 });
      await records.insertToolInvocations(callId, [invocation('t1'), invocation('t2')]);
      const events = await eventsOf(organizationId, 'tool.invoked');
      expect(events.map((event) => (event.payload as { data: { toolCallId: string } }).data.toolCallId).sort()).toEqual(['t1', 't2']);
      expect((events[0]!.payload as { data: unknown }).data).toMatchObject({ callId, name: 'lookup_order', arguments: { orderId: 'A-1' }, result: { status: 'shipped' } });
      await expect(records.insertToolInvocations('00000000-0000-4000-8000-000000000000', [invocation('t3')])).rejects.toMatchObject({ code: 'not_found' });
    });

    it('emits nothing for an organization without subscriptions', async () => {
      const { organizationId, callId, callSid } = await createInboundCall(repos);
      await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', at: t(1) });
      await repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: t(2) });
      expect(await eventsOf(organizationId)).toEqual([]);
    });
  });

  it('deleting a subscription fails its pending deliveries', async () => {
    const organizationId = await newOrganization();
    const subscription = await subscribe(organizationId, ['call.ended']);
    await enqueue(organizationId);
    expect(await subscriptions.delete(organizationId, subscription.id)).toBe(true);
    expect(await subscriptions.delete(organizationId, subscription.id)).toBe(false);
    const [delivery] = (await deliveries.list({ organizationId, limit: 10 })).items;
    expect(delivery).toMatchObject({ status: 'failed', lastError: 'subscription_deleted' });
    expect(await subscriptions.findById(organizationId, subscription.id)).toBeNull();
  });
});
