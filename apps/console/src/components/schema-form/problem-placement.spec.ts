import { describe, expect, it } from '@jest/globals';
import { formSchemaFor, type SchemaNode } from './form-schema';
import { placeProblems } from './problem-placement';

/** The shape of the server's agent config schema (GET /v1/agents/config-schema), cut down. */
const SCHEMA: SchemaNode = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  properties: {
    llm: { 'x-engines': ['pipeline'], type: 'object', additionalProperties: false, properties: { temperature: { type: 'number', minimum: 0, maximum: 2 } } },
    realtime: { 'x-engines': ['realtime'], type: 'object', additionalProperties: false, properties: { url: { type: 'string' } } },
    tools: {
      'x-engines': ['pipeline', 'realtime'],
      type: 'array',
      items: {
        oneOf: [
          { type: 'object', properties: { type: { type: 'string', const: 'end_call' }, goodbye: { type: 'string' } }, required: ['type'] },
          {
            type: 'object',
            properties: {
              type: { type: 'string', const: 'webhook' },
              url: { type: 'string' },
              parameters: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {}, default: { type: 'object', properties: {} } },
            },
            required: ['type', 'url'],
          },
        ],
      },
    },
  },
};

describe('placeProblems (the server 400s problems, at the fields the form shows)', () => {
  const form = formSchemaFor(SCHEMA, 'pipeline');
  const data = { llm: { temperature: 3 }, tools: [{ type: 'end_call' }, { type: 'webhook', url: 'ftp://x', parameters: { type: 'object', properties: { n: { pattern: '(' } } } }] };

  it('puts a problem at the field its path names, through objects, arrays and the union variant shown', () => {
    const placed = placeProblems(
      [
        { path: 'llm.temperature', message: 'Too big' },
        { path: 'tools.1.url', message: 'must be an http(s) URL' },
        { path: 'tools.1.url', message: 'refused' },
      ],
      form,
      data,
    );
    expect(placed.unplaced).toEqual([]);
    expect(placed.errors).toEqual({ llm: { temperature: { __errors: ['Too big'] } }, tools: { 1: { url: { __errors: ['must be an http(s) URL', 'refused'] } } } });
  });

  it('puts a path inside a JSON-edited field at that field, naming the rest of the path', () => {
    const placed = placeProblems([{ path: 'tools.1.parameters.properties.n.pattern', message: 'bad pattern' }], form, data);
    expect(placed.errors).toEqual({ tools: { 1: { parameters: { __errors: ['properties.n.pattern: bad pattern'] } } } });
  });

  it('leaves for the summary what the form does not show: the root, another engine\'s field, unknown keys, missing items', () => {
    const problems = [
      { path: '', message: 'Unrecognized key: "colour"' },
      { path: 'realtime.url', message: 'must be a ws(s) URL' },
      { path: 'llm.colour', message: 'unknown' },
      { path: 'tools.5.url', message: 'no such tool' },
      { path: 'tools.0.url', message: 'not a field of end_call' },
    ];
    const placed = placeProblems(problems, form, data);
    expect(placed.unplaced).toEqual(problems);
    expect(placed.errors).toEqual({});
  });

  it('shows a field for one engine only where its x-engines lists it', () => {
    expect(Object.keys(formSchemaFor(SCHEMA, 'realtime')['properties'] as object)).toEqual(['realtime', 'tools']);
    expect(Object.keys(formSchemaFor(SCHEMA, 'echo')['properties'] as object)).toEqual([]);
  });
});
