import { describe, expect, it } from '@jest/globals';
import { formSchemaFor, humanize, uiSchemaFor, type SchemaNode } from './form-schema';

const SCHEMA: SchemaNode = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    systemPrompt: { type: 'string', maxLength: 50_000, default: 'Be brief.' },
    firstMessage: { default: null, description: 'Greeting', anyOf: [{ type: 'string', maxLength: 2000 }, { type: 'null' }] },
    tools: {
      type: 'array',
      items: {
        oneOf: [
          { type: 'object', properties: { type: { type: 'string', const: 'end_call' } } },
          {
            type: 'object',
            properties: {
              type: { type: 'string', const: 'transfer_call' },
              parameters: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {}, default: { type: 'object', properties: {} }, description: 'JSON Schema' },
              signingSecretEnv: { not: {} },
            },
          },
        ],
      },
    },
  },
};

describe('formSchemaFor and uiSchemaFor (the config schema as the form renders it)', () => {
  const form = formSchemaFor(SCHEMA, 'pipeline');
  const properties = form['properties'] as Record<string, SchemaNode>;
  const variants = ((properties['tools'] as SchemaNode)['items'] as SchemaNode)['oneOf'] as SchemaNode[];

  it('titles fields and union variants for people, and names the union\'s tag', () => {
    expect(form['$schema']).toBeUndefined();
    expect(properties['systemPrompt']?.['title']).toBe('System prompt');
    expect(variants.map((variant) => variant['title'])).toEqual(['End call', 'Transfer call']);
    expect(((properties['tools'] as SchemaNode)['items'] as SchemaNode)['discriminator']).toEqual({ propertyName: 'type' });
  });

  it('renders a nullable string as a string that may be left empty', () => {
    expect(properties['firstMessage']).toEqual({ default: null, description: 'Greeting', type: 'string', maxLength: 2000, title: 'First message' });
  });

  it('drops fields that accept nothing, and leaves a free-form object to the JSON field with its default as the example', () => {
    const transfer = variants[1]?.['properties'] as Record<string, SchemaNode>;
    expect(Object.keys(transfer)).toEqual(['type', 'parameters']);
    expect(transfer['parameters']).toEqual({ title: 'Parameters', description: 'JSON Schema', examples: [{ type: 'object', properties: {} }], 'x-free-form': true });
  });

  it('derives the uiSchema from the schema: long strings as text areas, fixed values hidden, free-form as JSON', () => {
    expect(uiSchemaFor(form)).toEqual({
      systemPrompt: { 'ui:widget': 'textarea' },
      firstMessage: { 'ui:widget': 'textarea' },
      tools: { items: { 'ui:title': 'Type', oneOf: [{ type: { 'ui:widget': 'hidden' } }, { type: { 'ui:widget': 'hidden' }, parameters: { 'ui:field': 'json' } }] } },
    });
  });

  it('humanizes keys with their units and acronyms', () => {
    expect(['minSilenceMs', 'maxDurationS', 'apiKeySecret', 'baseUrl', 'stt', 'end_call', 'endOfTurnModel'].map(humanize)).toEqual([
      'Min silence (ms)',
      'Max duration (s)',
      'API key secret',
      'Base URL',
      'STT',
      'End call',
      'End of turn model',
    ]);
  });
});
