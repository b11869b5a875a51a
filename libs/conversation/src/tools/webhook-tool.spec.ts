import { OutboundRequestRefused } from '@switchboard/net';
import { WebhookToolSchema, type WebhookToolConfig } from '@switchboard/agent-config';
import { FakeBusinessEndpoint, type ReceivedRequest, signatureIsValid } from '@switchboard/testing';
import type { ToolCallContext } from './tool-contracts';
import { MAX_RESPONSE_BYTES, MAX_TEXT_RESULT_CHARS, WebhookTool } from './webhook-tool';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
/** The organization's vault, as the tool sees it: names to values. */
const vault: Record<string, string> = { booking: SECRET, 'not-a-signing-secret': 'plain-text-value-0123456789' };
const resolveSigningSecret = async (name: string) => vault[name];

const bookingParameters = {
  type: 'object',
  properties: {
    date: { type: 'string', format: 'date' },
    partySize: { type: 'integer', minimum: 1, maximum: 12 },
    seating: { enum: ['inside', 'terrace'] },
  },
  required: ['date', 'partySize'],
  additionalProperties: false,
};

function context(overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  return {
    callId: 'call-1',
    organizationId: 'org-1',
    agentId: 'agent-1',
    callerNumber: '+15550001111',
    signal: new AbortController().signal,
    ...overrides,
  };
}

function bookingTool(url: string, overrides: Partial<WebhookToolConfig> = {}): WebhookTool {
  const config = WebhookToolSchema.parse({
    type: 'webhook',
    name: 'book_table',
    description: 'Books a table',
    parameters: bookingParameters,
    url,
    signingSecret: 'booking',
    ...overrides,
  });
  return new WebhookTool(config, { resolveSigningSecret, newDeliveryId: () => 'msg_test_1' });
}

/** The receiver's check, made with the official standardwebhooks package rather than the module under test. */
function signatureMatches(request: ReceivedRequest, secret: string): boolean {
  const header = String(request.headers['webhook-signature']);
  expect(header.startsWith('v1,')).toBe(true);
  return signatureIsValid(request, secret);
}

const validArguments = JSON.stringify({ date: '2025-07-01', partySize: 4 });

describe('WebhookTool against a real business endpoint', () => {
  let business: FakeBusinessEndpoint;

  beforeEach(async () => {
    business = await FakeBusinessEndpoint.start();
  });
  afterEach(async () => {
    await business.close();
  });

  it('POSTs the signed JSON body and hands the JSON answer to the model', async () => {
    business.reply = () => ({ status: 200, contentType: 'application/json', body: '{"confirmed":true,"reference":"T-42"}' });
    const beforeS = Math.floor(Date.now() / 1000);

    const outcome = await bookingTool(business.url('/hooks/book')).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());

    expect(outcome).toEqual({
      content: '{"result":{"confirmed":true,"reference":"T-42"}}',
      result: { confirmed: true, reference: 'T-42' },
      action: { type: 'none' },
    });
    expect(business.received).toHaveLength(1);
    const request = business.received[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/book');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Switchboard-Tools/1');
    expect(request.headers['webhook-id']).toBe('msg_test_1');
    const timestampS = Number(request.headers['webhook-timestamp']);
    expect(timestampS).toBeGreaterThanOrEqual(beforeS);
    expect(timestampS).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(signatureMatches(request, SECRET)).toBe(true);
    expect(signatureMatches(request, `whsec_${Buffer.alloc(32, 8).toString('base64')}`)).toBe(false);
    expect(JSON.parse(request.bodyText)).toEqual({
      tool: 'book_table',
      arguments: { date: '2025-07-01', partySize: 4 },
      call: { id: 'call-1', agentId: 'agent-1', callerNumber: '+15550001111' },
    });
  });

  it('passes a plain-text answer as text, cut to about 4 kB', async () => {
    const long = 'Table booked. '.repeat(1000);
    business.reply = () => ({ status: 200, body: long });

    const outcome = await bookingTool(business.url()).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());

    expect(typeof outcome.result).toBe('string');
    expect(outcome.result).toBe(`${long.slice(0, MAX_TEXT_RESULT_CHARS)}...`);
    expect(JSON.parse(outcome.content)).toEqual({ result: outcome.result });
  });

  it('reports an empty 2xx answer as a null result', async () => {
    business.reply = () => ({ status: 204, body: '' });
    const outcome = await bookingTool(business.url()).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());
    expect(outcome).toMatchObject({ content: '{"result":null}', result: null });
  });

  it('turns an HTTP 500 into an error with an excerpt of the answer', async () => {
    business.reply = () => ({ status: 500, body: 'Internal error:\n  booking database unavailable' });

    const outcome = await bookingTool(business.url()).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());

    expect(outcome).toEqual({
      content: JSON.stringify({ error: 'business endpoint answered HTTP 500: Internal error: booking database unavailable' }),
      error: 'business endpoint answered HTTP 500: Internal error: booking database unavailable',
      action: { type: 'none' },
    });
    expect(outcome.result).toBeUndefined();
  });

  it('gives up after timeoutMs when the endpoint never answers', async () => {
    business.reply = () => 'never';
    const started = Date.now();

    const outcome = await bookingTool(business.url(), { timeoutMs: 200 }).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());

    expect(outcome.error).toBe('business endpoint timed out after 200 ms');
    expect(JSON.parse(outcome.content)).toEqual({ error: 'business endpoint timed out after 200 ms' });
    expect(business.received).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(10_000); // generous: only proves it did not hang
  });

  it('stops waiting when the call ends (the context signal aborts)', async () => {
    business.reply = () => 'never';
    const hangUp = new AbortController();

    const pending = bookingTool(business.url(), { timeoutMs: 30_000 }).run(
      { id: 'tc_1', name: 'book_table', arguments: validArguments },
      context({ signal: hangUp.signal }),
    );
    await waitFor(() => business.received.length === 1);
    hangUp.abort();

    expect((await pending).error).toMatch(/^cancelled before the business endpoint answered/);
  });

  it('never calls the endpoint with arguments that fail the schema, and lists the failing paths', async () => {
    const tool = bookingTool(business.url());
    const outcome = await tool.run(
      { id: 'tc_1', name: 'book_table', arguments: JSON.stringify({ date: 'next tuesday', partySize: 0, seating: 'roof', pets: true }) },
      context(),
    );

    expect(outcome.error).toBe(
      "arguments do not match the tool's parameters: /pets: is not an allowed property; /date: must match format \"date\"; " +
        '/partySize: must be >= 1; /seating: must be one of ["inside","terrace"]',
    );
    const missing = await tool.run({ id: 'tc_2', name: 'book_table', arguments: '{"date":"2025-07-01"}' }, context());
    expect(missing.error).toBe("arguments do not match the tool's parameters: /partySize: is required");
    expect(business.received).toHaveLength(0);
  });

  it('never calls the endpoint with arguments that are not a JSON object', async () => {
    const tool = bookingTool(business.url());
    const truncated = await tool.run({ id: 'tc_1', name: 'book_table', arguments: '{"date": "2025-07' }, context());
    expect(truncated.error).toMatch(/^arguments are not valid JSON \(.+\): \{"date": "2025-07$/);
    const array = await tool.run({ id: 'tc_2', name: 'book_table', arguments: '[1,2]' }, context());
    expect(array.error).toBe('arguments must be a JSON object');
    expect(business.received).toHaveLength(0);
  });

  it('reports a refused connection clearly', async () => {
    const outcome = await bookingTool(await FakeBusinessEndpoint.refusedUrl()).run(
      { id: 'tc_1', name: 'book_table', arguments: validArguments },
      context(),
    );
    expect(outcome.error).toBe('could not reach the business endpoint: connection refused (ECONNREFUSED)');
  });

  it('does not follow a redirect (it would re-send the signed body elsewhere)', async () => {
    const elsewhere = await FakeBusinessEndpoint.start();
    try {
      business.reply = () => ({ status: 307, body: '', headers: { location: elsewhere.url() } });
      const outcome = await bookingTool(business.url()).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());
      expect(outcome.error).toBe('business endpoint answered HTTP 307');
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('refuses an answer larger than the limit', async () => {
    business.reply = () => ({ status: 200, body: JSON.stringify({ blob: 'x'.repeat(MAX_RESPONSE_BYTES) }) });
    const outcome = await bookingTool(business.url()).run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());
    expect(outcome.error).toBe(`business endpoint answered more than ${MAX_RESPONSE_BYTES} bytes`);
  });

  it('does not call the endpoint when the signing secret is missing from the vault or not a Standard Webhooks secret', async () => {
    const missing = await bookingTool(business.url(), { signingSecret: 'not-in-the-vault' }).run(
      { id: 'tc_1', name: 'book_table', arguments: validArguments },
      context(),
    );
    expect(missing.error).toBe('the signing secret "not-in-the-vault" does not exist in this organization');

    const unusable = await bookingTool(business.url(), { signingSecret: 'not-a-signing-secret' }).run(
      { id: 'tc_2', name: 'book_table', arguments: validArguments },
      context(),
    );
    expect(unusable.error).toMatch(/whsec_/);
    expect(unusable.content).not.toContain('plain-text-value');
    expect(business.received).toHaveLength(0);
  });

  it('sends through the fetch it is given (the server passes its outbound guard) and reports a refusal as such', async () => {
    const refusal = new OutboundRequestRefused('OUTBOUND_ADDRESS_REFUSED', '127.0.0.1 is a loopback address');
    const seen: string[] = [];
    const config = WebhookToolSchema.parse({ type: 'webhook', name: 'book_table', description: 'Books a table', parameters: bookingParameters, url: business.url(), signingSecret: 'booking' });
    const tool = new WebhookTool(config, {
      resolveSigningSecret,
      fetch: async (url, init) => {
        seen.push(`${url} ${init.timeoutMs}`);
        throw new TypeError('fetch failed', { cause: refusal });
      },
    });
    const outcome = await tool.run({ id: 'tc_1', name: 'book_table', arguments: validArguments }, context());
    expect(seen).toEqual([`${business.url()} 5000`]);
    expect(outcome.error).toBe('the business endpoint was not called: refused: 127.0.0.1 is a loopback address');
    expect(business.received).toHaveLength(0);
  });

  it('refuses, at construction, a parameters schema that does not compile', () => {
    expect(() => bookingTool(business.url(), { parameters: { type: 'object', properties: 5 } })).toThrow(
      /^tool "book_table": parameters is not a usable JSON Schema: schema is invalid/,
    );
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
