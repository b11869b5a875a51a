import { SpanStatusCode } from '@opentelemetry/api';
import { createToolRunner, type ToolCallContext } from '@switchboard/conversation';
import { type ToolConfig, ToolConfigSchema } from '@switchboard/agent-config';
import { FakeBusinessEndpoint } from '@switchboard/testing';
import { EngineObservers } from './engine-observer';
import { observeTools, toolFailureOf } from './observed-tools';
import { ATTR } from './span-attributes';
import { traceAgentEngine } from './traced-agent-engine';
import { callContext, engineErrors, inMemoryTracing, noOutput, RecordingAgentEngine } from './tracing.test-support';

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const context: ToolCallContext = { callId: 'call-1', organizationId: 'org-1', agentId: 'agent-1', callerNumber: '+15550001111', signal: new AbortController().signal };

/**
 * Tool calls against a real local endpoint through the real webhook tool, so a change to the
 * tool's error wording that the classification no longer recognises fails here.
 */
describe('observed webhook tools', () => {
  let business: FakeBusinessEndpoint;
  let setup: ReturnType<typeof inMemoryTracing>;

  const tools = (timeoutMs = 2_000): ToolConfig[] =>
    [
      { type: 'end_call' },
      {
        type: 'webhook',
        name: 'lookup_order',
        description: 'Looks up an order',
        parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } }, required: ['orderId'] },
        url: business.url('/tools'),
        signingSecret: 'crm',
        timeoutMs,
      },
    ].map((tool) => ToolConfigSchema.parse(tool));

  const runner = (timeoutMs?: number) => {
    const configs = tools(timeoutMs);
    return observeTools(createToolRunner(configs, { resolveSigningSecret: async () => SECRET }), configs, new EngineObservers(setup.errors, setup.tracing));
  };
  const call = (args: string) => ({ id: 'tc_1', name: 'lookup_order', arguments: args });

  beforeEach(async () => {
    business = await FakeBusinessEndpoint.start();
    setup = inMemoryTracing();
    traceAgentEngine(new RecordingAgentEngine(), setup.tracing).createSession(callContext(), noOutput);
  });
  afterEach(async () => business.close());

  it('spans each webhook call with the tool name only, and counts the endpoint failures', async () => {
    business.reply = () => ({ status: 200, body: '{"status":"shipped"}', contentType: 'application/json' });
    expect((await runner().run(call('{"orderId":"4567"}'), context)).error).toBeUndefined();
    business.reply = () => ({ status: 503, body: 'order service for acme down', contentType: 'text/plain' });
    expect((await runner().run(call('{"orderId":"4567"}'), context)).error).toMatch(/HTTP 503/);
    business.reply = () => 'never';
    expect((await runner(100).run(call('{"orderId":"4567"}'), context)).error).toMatch(/timed out/);
    // The model's arguments broke the schema: no request was made, so no endpoint failure.
    expect((await runner().run(call('{"orderId":"abc"}'), context)).error).toBeDefined();

    expect(await engineErrors(setup.registry, 'webhook', 'tool')).toBe(2);
    const spans = setup.exporter.getFinishedSpans().filter((span) => span.name === 'tool');
    expect(spans.map((span) => [span.attributes[ATTR.toolName], span.attributes[ATTR.errorType], span.attributes[ATTR.httpStatus], span.status.code])).toEqual([
      ['lookup_order', undefined, undefined, SpanStatusCode.UNSET],
      ['lookup_order', 'http_error', 503, SpanStatusCode.ERROR],
      ['lookup_order', 'timeout', undefined, SpanStatusCode.ERROR],
      ['lookup_order', 'invalid_call', undefined, SpanStatusCode.ERROR],
    ]);
    const values = JSON.stringify(spans.map((span) => span.attributes));
    expect(values).not.toMatch(/4567|acme|\+1555/);
  });

  it('passes built-in tools through untouched', async () => {
    const outcome = await runner().run({ id: 'tc_2', name: 'end_call', arguments: '{}' }, context);
    expect(outcome.action.type).toBe('end_call');
    expect(setup.exporter.getFinishedSpans()).toEqual([]);
  });

  it('classifies the tool errors it knows, and treats the rest as calls that were never made', () => {
    expect(toolFailureOf('could not reach the business endpoint: connection refused (ECONNREFUSED)')).toEqual({ errorType: 'unavailable', cancelled: false });
    expect(toolFailureOf('the business endpoint was not called: private address')).toEqual({ errorType: 'endpoint_refused', cancelled: false });
    expect(toolFailureOf('cancelled before the business endpoint answered (the call ended or the caller interrupted)').cancelled).toBe(true);
    expect(toolFailureOf('the signing secret "crm" does not exist in this organization')).toEqual({ errorType: 'invalid_call', cancelled: false, counted: false });
  });
});
