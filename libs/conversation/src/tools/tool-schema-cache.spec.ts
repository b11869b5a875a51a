import { ToolConfigSchema, type ToolConfig } from '@switchboard/agent-config';
import { createToolRunner } from './agent-tool-runner';
import type { ToolCallContext } from './tool-contracts';
import { ToolSchemaCache } from './tool-schema';
import { catastrophic, compiled, expectPatternsOnRe2, LINEAR_BOUND_MS, stringSchema, timed } from '../../../testing/src/conversation/tool-schema-checks';

describe('ArgumentValidator: validation cost per call', () => {
  it('refuses, quickly and unvalidated, arguments too large for a heavy schema, and still validates small ones', () => {
    const branches = Array.from({ length: 900 }, (_, index) => ({ minimum: index }));
    const validator = compiled({ type: 'object', properties: { xs: { type: 'array', items: { anyOf: branches } } } });
    // Validated, these 16 000 values would create ~14 million error objects: about 15 s of event loop.
    const huge = timed(() => validator.problems({ xs: Array.from({ length: 16_000 }, () => -1) }));
    expect(huge.result).toMatch(/^arguments are too large for this tool: 16002 JSON values; its parameters schema accepts at most \d+$/);
    expect(huge.ms).toBeLessThan(LINEAR_BOUND_MS);
    expect(validator.problems({ xs: [1000, 5] })).toBeUndefined();
    expect(validator.problems({ xs: [-1] })).toContain('/xs/0: must be >= 0');
  });

  it('bounds text against a large pattern program', () => {
    const validator = compiled(stringSchema({ pattern: 'a[ab]{990}c' }));
    expect(validator.problems({ value: 'b'.repeat(30_000) })).toMatch(/^arguments are too large for this tool: 30005 characters of text/);
    expect(validator.problems({ value: `a${'b'.repeat(990)}c` })).toBeUndefined();
  });
});

describe('ToolSchemaCache', () => {
  const schema = stringSchema({ pattern: '^x+$' });

  it('returns the same compilation for the same key, compiling once', () => {
    const cache = new ToolSchemaCache();
    const first = cache.compile('agent-1:3:lookup', schema);
    // Same key: the cached compilation, even if a caller passed another schema by mistake.
    expect(cache.compile('agent-1:3:lookup', { type: 'string' })).toBe(first);
    expect(cache.compile('agent-1:4:lookup', schema)).not.toBe(first);
    expect(cache.size).toBe(2);
  });

  it('caches refusals too, so a bad stored schema is not recompiled at every call', () => {
    const cache = new ToolSchemaCache();
    const refused = cache.compile('agent-1:1:bad', stringSchema({ pattern: '(a)\\1' }));
    expect(refused.ok).toBe(false);
    expect(cache.compile('agent-1:1:bad', schema)).toBe(refused);
  });

  it('stays bounded, dropping the least recently used entry', () => {
    const cache = new ToolSchemaCache(3);
    const kept = cache.compile('k0', schema);
    for (let index = 1; index <= 10; index++) {
      cache.compile(`k${index}`, schema);
      expect(cache.compile('k0', schema)).toBe(kept);
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(cache.size).toBe(3);
    expect(cache.compile('k1', schema)).not.toBe(kept);
    expect(() => new ToolSchemaCache(0)).toThrow('maxEntries must be a positive integer');
  });
});

describe('createToolRunner with a ToolSchemaCache', () => {
  const context: ToolCallContext = {
    callId: 'call-1',
    organizationId: 'org-1',
    agentId: 'agent-1',
    callerNumber: '+15550001111',
    signal: new AbortController().signal,
  };
  // No signing-secret field: these runs stop at argument validation, before anything is signed or sent.
  const webhook = (parameters: Record<string, unknown>): ToolConfig[] => [
    { type: 'webhook', name: 'lookup_order', description: 'Looks up an order', parameters, url: 'https://crm.example.com/orders', timeoutMs: 5000 } as unknown as ToolConfig,
    ToolConfigSchema.parse({ type: 'end_call' }),
  ];
  const orderSchema = { type: 'object', properties: { orderId: { type: 'string', pattern: catastrophic } }, required: ['orderId'] };

  it('compiles each webhook schema once per config key and validates with it', async () => {
    const cache = new ToolSchemaCache();
    const first = createToolRunner(webhook(orderSchema), { schemaCache: { cache, configKey: 'agent-1:7' } });
    createToolRunner(webhook(orderSchema), { schemaCache: { cache, configKey: 'agent-1:7' } });
    expect(cache.size).toBe(1);
    createToolRunner(webhook(orderSchema), { schemaCache: { cache, configKey: 'agent-1:8' } });
    expect(cache.size).toBe(2);

    expectPatternsOnRe2();
    const outcome = await first.run({ id: 't1', name: 'lookup_order', arguments: JSON.stringify({ orderId: `${'a'.repeat(40)}!` }) }, context);
    expect(outcome.error).toBe(`arguments do not match the tool's parameters: /orderId: must match pattern "${catastrophic}"`);
  });

  it('throws, naming the tool, for a stored schema saved before the checks', () => {
    const cache = new ToolSchemaCache();
    const stored = webhook(stringSchema({ pattern: '(a)\\1' }));
    const build = () => createToolRunner(stored, { schemaCache: { cache, configKey: 'agent-1:1' } });
    expect(build).toThrow(/^tool "lookup_order": parameters is not a usable JSON Schema: schema is invalid: properties\.value\.pattern: pattern/);
    expect(build).toThrow(/RE2/);
    expect(() => createToolRunner(stored)).toThrow(/^tool "lookup_order": parameters is not a usable JSON Schema: schema is invalid/);
  });
});
