/**
 * GET /v1/calls/live, the console's live call list: server-sent events of the organization's
 * calls as they change, read the way the console reads them (fetch with the key, a text stream).
 * Only the key's own organization's calls arrive, open feeds are bounded, and shutdown ends them.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { CallRepository } from '@switchboard/persistence';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

const OPERATOR_KEY = 'sk_operator_live_feed_test_0000000000';
import { LIVE_FEEDS_PER_ORGANIZATION } from '../../apps/server/src/calls/live-call-feed.service';

jest.setTimeout(60_000);

interface Feed {
  events: Array<{ event: string; data: any }>;
  text: () => string;
  close: () => void;
  ended: Promise<void>;
}

/** Opens the feed and collects its events (a minimal SSE reader: `event:` and `data:` lines). */
async function openFeed(server: TestServer, apiKey = server.adminApiKey): Promise<Feed & { status: number }> {
  const aborted = new AbortController();
  const response = await fetch(`${server.serverUrl}/v1/calls/live`, { headers: { authorization: `Bearer ${apiKey}` }, signal: aborted.signal });
  let raw = '';
  const events: Feed['events'] = [];
  const ended = (async () => {
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      return;
    }
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        raw += decoder.decode(chunk, { stream: true });
        for (let end = raw.indexOf('\n\n'); end !== -1; end = raw.indexOf('\n\n')) {
          const block = raw.slice(0, end);
          raw = raw.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return { status: response.status, events, text: () => raw, close: () => aborted.abort(), ended };
}

/** Counts, per organization, the polls its feeds have finished asking the database. */
function countPolls(server: TestServer): Map<string, number> {
  const calls = server.app.get(CallRepository);
  const listUpdatedSince = calls.listUpdatedSince.bind(calls);
  const polls = new Map<string, number>();
  jest.spyOn(calls, 'listUpdatedSince').mockImplementation(async (organizationId, since, limit) => {
    const rows = await listUpdatedSince(organizationId, since, limit);
    polls.set(organizationId, (polls.get(organizationId) ?? 0) + 1);
    return rows;
  });
  return polls;
}

describe('GET /v1/calls/live (e2e)', () => {
  let server: TestServer;
  let closed = false;

  beforeAll(async () => {
    server = await startTestServer({ OPERATOR_API_KEY: OPERATOR_KEY });
  });

  afterAll(async () => {
    if (!closed) await server?.close();
  });

  it('streams a call as it starts and as it ends, to its own organization only', async () => {
    const own = await openFeed(server);
    expect(own.status).toBe(200);
    const otherOrg = await server.api('/v1/organizations', { apiKey: OPERATOR_KEY, method: 'POST', body: { name: `other-${Date.now()}` } });
    expect(otherOrg.status).toBe(201);
    const otherPolls = countPolls(server);
    const other = await openFeed(server, otherOrg.body.adminKey.key as string);
    expect(other.status).toBe(200);

    const result = await server.callEcho({ audio: new Uint8Array(8000).fill(0xff), trailingSilenceMs: 200, statusCallbacks: true });
    const callId = result.twiml?.stream?.parameters['callId'] as string;
    // Twilio's `completed` callback and the call's end record are separate writes, in either order: wait for both.
    await eventually(async () => own.events, (events) => events.some((event) => event.data.id === callId && event.data.status === 'completed' && event.data.endReason !== null), 10_000);
    const mine = own.events.filter((event) => event.data.id === callId);
    expect(mine[0]).toMatchObject({ event: 'call', data: { id: callId, direction: 'inbound', endedAt: null } });
    expect(mine.at(-1)?.data).toMatchObject({ status: 'completed', endReason: 'stream_stopped' });
    // Each version of the row once: no duplicates from the look-back.
    const versions = mine.map((event) => event.data.updatedAt);
    expect(new Set(versions).size).toBe(versions.length);
    // Nothing arriving is only meaningful once the other organization's feed has asked the database
    // after the call ended: two of its polls finished from here on, so the first one's rows (were
    // any leaked) were written a whole poll interval before.
    const otherOrgId = otherOrg.body.id as string;
    const pollsAtEnd = otherPolls.get(otherOrgId) ?? 0;
    await eventually(async () => otherPolls.get(otherOrgId) ?? 0, (polls) => polls >= pollsAtEnd + 2, 10_000);
    expect(other.events).toEqual([]);
    other.close();
    own.close();
  });

  it('refuses an unknown key, bounds open feeds per organization, and ends feeds at shutdown', async () => {
    expect((await openFeed(server, 'sk_live_unknown_key_0000000000')).status).toBe(401);
    const feeds = [];
    for (let i = 0; i < LIVE_FEEDS_PER_ORGANIZATION; i++) feeds.push(await openFeed(server));
    expect(feeds.every((feed) => feed.status === 200)).toBe(true);
    const refused = await fetch(`${server.serverUrl}/v1/calls/live`, { headers: { authorization: `Bearer ${server.adminApiKey}` } });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'too_many_live_feeds' });
    feeds[0]?.close();
    // The server frees the slot when it sees the connection close: open again until it has.
    const again = await eventually(() => openFeed(server), (feed) => feed.status !== 429);
    expect(again.status).toBe(200);

    closed = true;
    await server.close();
    await Promise.all([...feeds.slice(1), again].map((feed) => Promise.race([feed.ended, delay(5_000, undefined, { ref: false }).then(() => Promise.reject(new Error('feed not ended at shutdown')))])));
  });
});
