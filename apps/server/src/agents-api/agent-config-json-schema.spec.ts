import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parseAgentConfig } from '@switchboard/agent-config';
import { agentConfigJsonSchema } from './agent-config-json-schema';

describe('agentConfigJsonSchema (GET /v1/agents/config-schema)', () => {
  it('is made once and cannot be changed by a caller', () => {
    const schema = agentConfigJsonSchema();
    expect(agentConfigJsonSchema()).toBe(schema);
    expect(Object.isFrozen(schema)).toBe(true);
    expect(Object.isFrozen((schema['properties'] as Record<string, object>)['llm'])).toBe(true);
  });

  it('describes what a client writes: defaults shown, nothing required, every field with the engines that read it', () => {
    const schema = agentConfigJsonSchema() as { required?: string[]; properties: Record<string, { default?: unknown; 'x-engines'?: string[] }> };
    expect(schema.required ?? []).toEqual([]);
    expect(schema.properties['maxDurationS']?.default).toBe(1800);
    for (const [key, field] of Object.entries(schema.properties)) expect({ key, engines: Array.isArray(field['x-engines']) }).toEqual({ key, engines: true });
  });

  it('accepts every config the server stores (defaults filled in) and refuses what the zod schema refuses', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(agentConfigJsonSchema());
    const stored = parseAgentConfig({
      firstMessage: 'Hello',
      llm: { temperature: 1.2 },
      tools: [{ type: 'end_call' }, { type: 'transfer_call', destinations: [{ number: '+15551230000', label: 'desk' }] }, { type: 'webhook', name: 'lookup', description: 'Find an order', url: 'https://example.com/hook', signingSecret: 'booking-signing' }],
    });
    expect(validate(stored)).toBe(true);
    expect(validate({})).toBe(true);
    for (const bad of [{ llm: { temperature: 3 } }, { turn: { minSilenceMs: 5 } }, { colour: 'blue' }, { tools: [{ type: 'fax' }] }, { maxDurationS: 1.5 }]) {
      expect({ bad, valid: validate(bad) }).toEqual({ bad, valid: false });
      expect(() => parseAgentConfig(bad)).toThrow();
    }
  });
});
