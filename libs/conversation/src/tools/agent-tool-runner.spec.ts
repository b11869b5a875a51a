import { Webhook } from 'standardwebhooks';
import { ToolConfigSchema, type ToolConfig } from '@switchboard/agent-config';
import { createToolRunner, DEFAULT_FILLER_MESSAGE } from './agent-tool-runner';
import { FakeBusinessEndpoint } from '@switchboard/testing';
import type { ToolCallContext } from './tool-contracts';

const CRM_SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const resolveSigningSecret = async (name: string) => (name === 'crm' ? CRM_SECRET : undefined);

const context: ToolCallContext = {
  callId: 'call-7',
  organizationId: 'org-1',
  agentId: 'agent-3',
  callerNumber: '+15550009999',
  signal: new AbortController().signal,
};

function tools(url: string): ToolConfig[] {
  return [
    { type: 'end_call' },
    { type: 'transfer_call', destinations: [{ number: '+15550002000', label: 'Support' }] },
    {
      type: 'webhook',
      name: 'lookup_order',
      description: 'Looks up an order by its number',
      parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]{6}$' } }, required: ['orderId'] },
      url,
      signingSecret: 'crm',
      fillerMessage: 'Let me pull up that order.',
    },
    { type: 'webhook', name: 'opening_hours', description: 'Today\'s opening hours', url, signingSecret: 'crm' },
  ].map((tool) => ToolConfigSchema.parse(tool));
}

describe('createToolRunner', () => {
  let business: FakeBusinessEndpoint;

  beforeEach(async () => {
    business = await FakeBusinessEndpoint.start();
  });
  afterEach(async () => {
    await business.close();
  });

  it('lists one definition per tool, in configuration order', () => {
    const runner = createToolRunner(tools(business.url()), { resolveSigningSecret });
    expect(runner.definitions.map((d) => d.name)).toEqual(['end_call', 'transfer_call', 'lookup_order', 'opening_hours']);
    expect(runner.definitions[3]).toEqual({ name: 'opening_hours', description: "Today's opening hours", parameters: { type: 'object', properties: {} } });
  });

  it('names a filler line for webhook tools only', () => {
    const runner = createToolRunner(tools(business.url()), { resolveSigningSecret });
    expect(runner.fillerFor('lookup_order')).toBe('Let me pull up that order.');
    expect(runner.fillerFor('opening_hours')).toBe(DEFAULT_FILLER_MESSAGE);
    expect(DEFAULT_FILLER_MESSAGE).toBe('One moment while I check that.');
    expect(runner.fillerFor('end_call')).toBeUndefined();
    expect(runner.fillerFor('transfer_call')).toBeUndefined();
    expect(runner.fillerFor('no_such_tool')).toBeUndefined();
  });

  it('runs a webhook tool against the business endpoint, signed', async () => {
    business.reply = (request) => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'shipped', echo: JSON.parse(request.bodyText) }) });
    const runner = createToolRunner(tools(business.url('/crm')), { resolveSigningSecret });

    const outcome = await runner.run({ id: 'tc_9', name: 'lookup_order', arguments: '{"orderId":"123456"}' }, context);

    expect(outcome.error).toBeUndefined();
    expect(outcome.result).toEqual({
      status: 'shipped',
      echo: { tool: 'lookup_order', arguments: { orderId: '123456' }, call: { id: 'call-7', agentId: 'agent-3', callerNumber: '+15550009999' } },
    });
    const request = business.received[0]!;
    // Exactly the signature the official standardwebhooks package computes for this id, timestamp and body.
    const sentAt = new Date(Number(request.headers['webhook-timestamp']) * 1000);
    expect(request.headers['webhook-signature']).toBe(new Webhook(CRM_SECRET).sign(String(request.headers['webhook-id']), sentAt, request.bodyText));
  });

  it('keeps invalid arguments away from the endpoint', async () => {
    const runner = createToolRunner(tools(business.url()), { resolveSigningSecret });
    const outcome = await runner.run({ id: 'tc_1', name: 'lookup_order', arguments: '{"orderId":"12"}' }, context);
    expect(outcome.error).toBe('arguments do not match the tool\'s parameters: /orderId: must match pattern "^[0-9]{6}$"');
    expect(business.received).toHaveLength(0);
  });

  it('returns the built-in actions', async () => {
    const runner = createToolRunner(tools(business.url()), { resolveSigningSecret });
    expect((await runner.run({ id: 'a', name: 'end_call', arguments: '{}' }, context)).action).toEqual({
      type: 'end_call',
      goodbye: 'Thank you for calling. Goodbye.',
    });
    expect((await runner.run({ id: 'b', name: 'transfer_call', arguments: '{"destination":"+15550002000"}' }, context)).action).toEqual({
      type: 'transfer',
      to: '+15550002000',
      message: 'Please hold while I transfer your call.',
    });
    const unlisted = await runner.run({ id: 'c', name: 'transfer_call', arguments: '{"destination":"+15550000000"}' }, context);
    expect(unlisted).toMatchObject({ action: { type: 'none' }, error: expect.stringContaining('not an allowed destination') });
  });

  it('answers an unknown tool name with an error that lists the tools', async () => {
    const runner = createToolRunner(tools(business.url()), { resolveSigningSecret });
    const outcome = await runner.run({ id: 'x', name: 'delete_everything', arguments: '{}' }, context);
    expect(outcome).toEqual({
      content: JSON.stringify({ error: outcome.error }),
      error: 'unknown tool "delete_everything"; available tools: end_call, transfer_call, lookup_order, opening_hours',
      action: { type: 'none' },
    });
    expect(business.received).toHaveLength(0);
  });

  it('rejects duplicate tool names at construction', () => {
    const url = business.url();
    const duplicateWebhook = [...tools(url), ...tools(url).slice(2, 3)];
    expect(() => createToolRunner(duplicateWebhook, { resolveSigningSecret })).toThrow('two tools are named "lookup_order"');
    const webhookNamedLikeBuiltIn = ToolConfigSchema.parse({ type: 'webhook', name: 'end_call', description: 'x', url, signingSecret: 'crm' });
    expect(() => createToolRunner([{ type: 'end_call', goodbye: 'Bye' }, webhookNamedLikeBuiltIn], { resolveSigningSecret })).toThrow('two tools are named "end_call"');
  });

  it('works with no tools at all', async () => {
    const runner = createToolRunner([]);
    expect(runner.definitions).toEqual([]);
    expect((await runner.run({ id: 'x', name: 'end_call', arguments: '' }, context)).error).toBe('unknown tool "end_call"; available tools: none');
  });
});
