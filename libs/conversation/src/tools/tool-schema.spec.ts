import {
  compileToolSchema,
  MAX_PATTERN_CHARS,
  MAX_SCHEMA_BYTES,
  MAX_SCHEMA_DEPTH,
  MAX_SCHEMA_NODES,
} from './tool-schema';
import { catastrophic, compiled, expectPatternsOnRe2, LINEAR_BOUND_MS, refusals, stringSchema, timed } from '../../../testing/src/conversation/tool-schema-checks';

describe('compileToolSchema: patterns run in linear time', () => {
  it('validates a catastrophic `pattern` against 40 and 100 000 characters without backtracking', () => {
    expectPatternsOnRe2();
    const validator = compiled(stringSchema({ pattern: catastrophic }));

    const short = timed(() => validator.problems({ value: `${'a'.repeat(40)}!` }));
    expect(short.result).toBe(`arguments do not match the tool's parameters: /value: must match pattern "${catastrophic}"`);
    expect(short.ms).toBeLessThan(LINEAR_BOUND_MS);

    const long = timed(() => validator.problems({ value: `${'a'.repeat(100_000)}!` }));
    expect(long.result).toContain('must match pattern');
    expect(long.ms).toBeLessThan(LINEAR_BOUND_MS);

    expect(validator.problems({ value: 'a'.repeat(100_000) })).toBeUndefined();
    expect(validator.problems({ value: '' })).toBeUndefined();
  });

  it('validates catastrophic `patternProperties` keys likewise', () => {
    expectPatternsOnRe2();
    const validator = compiled({ type: 'object', patternProperties: { [catastrophic]: { type: 'integer' } }, additionalProperties: false });

    const key = `${'a'.repeat(40)}!`;
    const short = timed(() => validator.problems({ [key]: 1 }));
    expect(short.result).toBe(`arguments do not match the tool's parameters: /${key}: is not an allowed property`);
    expect(short.ms).toBeLessThan(LINEAR_BOUND_MS);

    const long = timed(() => validator.problems({ [`${'a'.repeat(100_000)}!`]: 1 }));
    expect(long.result).toContain('is not an allowed property');
    expect(long.ms).toBeLessThan(LINEAR_BOUND_MS);

    expect(validator.problems({ aaaa: 'x' })).toBe("arguments do not match the tool's parameters: /aaaa: must be integer");
    expect(validator.problems({ aaaa: 3 })).toBeUndefined();
  });

  it('keeps each pattern of a schema apart (Ajv shares compiled patterns by their text)', () => {
    const validator = compiled({
      type: 'object',
      properties: { letters: { type: 'string', pattern: '^[a-z]+$' }, digits: { type: 'string', pattern: '^[0-9]+$' } },
    });
    expect(validator.problems({ letters: 'abc', digits: '123' })).toBeUndefined();
    expect(validator.problems({ letters: '123', digits: 'abc' })).toBe(
      'arguments do not match the tool\'s parameters: /letters: must match pattern "^[a-z]+$"; /digits: must match pattern "^[0-9]+$"',
    );
  });

  it('reads ECMAScript \\u escapes (RE2 spells them \\x{...})', () => {
    const validator = compiled(stringSchema({ pattern: '^[\\u00e0-\\u00ff]+\\uD83D\\uDE00\\u{1F600}$' }));
    expect(validator.problems({ value: 'éà😀😀' })).toBeUndefined();
    expect(validator.problems({ value: 'e😀😀' })).toContain('must match pattern');
    expect(compiled(stringSchema({ pattern: '^\\\\u0041$' })).problems({ value: '\\u0041' })).toBeUndefined();
  });
});

describe('compileToolSchema: refusals at save, with paths', () => {
  it.each([
    ['an array', []],
    ['null', null],
    ['a string', 'object'],
    ['an object without type', { properties: {} }],
    ['a string schema', { type: 'string' }],
    ['a list of types', { type: ['object', 'null'], properties: {} }],
  ])('refuses %s at the root', (_label, schema) => {
    expect(refusals(schema)).toEqual([{ path: '', message: 'parameters must be a JSON object schema with "type": "object" at the root' }]);
  });

  it("maps Ajv's meta-schema errors to dotted paths", () => {
    expect(refusals(stringSchema({ minLength: 'x' }))).toEqual([{ path: 'properties.value.minLength', message: 'must be integer' }]);
    expect(refusals({ type: 'object', properties: 5 })).toEqual([{ path: 'properties', message: 'must be object' }]);
    expect(refusals({ type: 'object', required: 'name' })).toEqual([{ path: 'required', message: 'must be array' }]);
  });

  it.each([
    ['an unbalanced class', '[a-z', 'missing closing ]'],
    ['a backreference', '^(a)\\1$', 'invalid escape sequence: `\\1`'],
    ['a lookahead', '^(?=a)a$', 'invalid or unsupported Perl syntax: `(?=`'],
    ['a negative lookbehind', '(?<!a)b', 'invalid named capture'],
    ['a named backreference', '(?<x>a)\\k<x>', 'invalid escape sequence: `\\k`'],
    ['a repeat over 1000', 'a{1001}', 'invalid repeat count'],
  ])('refuses a pattern with %s, naming its path and RE2\'s reason', (_label, pattern, reason) => {
    const [problem, ...others] = refusals(stringSchema({ pattern }));
    expect(others).toEqual([]);
    expect(problem?.path).toBe('properties.value.pattern');
    expect(problem?.message).toContain(`pattern ${JSON.stringify(pattern)} cannot run on the linear-time regex engine (RE2)`);
    expect(problem?.message).toContain(reason);
  });

  it('refuses patternProperties keys and propertyNames patterns RE2 cannot run', () => {
    expect(refusals({ type: 'object', patternProperties: { '^(?!x)': {} } })).toEqual([
      expect.objectContaining({ path: 'patternProperties.^(?!x)' }),
    ]);
    expect(refusals({ type: 'object', propertyNames: { pattern: '(a)\\1' } })).toEqual([
      expect.objectContaining({ path: 'propertyNames.pattern' }),
    ]);
    expect(refusals({ type: 'object', properties: { tags: { type: 'array', items: { type: 'string', pattern: '(?=a)' } } } })).toEqual([
      expect.objectContaining({ path: 'properties.tags.items.pattern' }),
    ]);
  });

  it('refuses a pattern reachable only through a $ref into an unknown keyword', () => {
    const schema = { type: 'object', 'x-shared': { pattern: '(a)\\1' }, properties: { value: { $ref: '#/x-shared' } } };
    expect(refusals(schema)).toEqual([expect.objectContaining({ path: 'x-shared.pattern' })]);
  });

  it('refuses a pattern over the length bound, without echoing it', () => {
    const pattern = `(a)\\1${'x'.repeat(MAX_PATTERN_CHARS)}`;
    const [problem] = refusals(stringSchema({ pattern }));
    expect(problem).toEqual({ path: 'properties.value.pattern', message: `pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted` });
    const [long] = refusals(stringSchema({ pattern: `(a)\\1${'x'.repeat(MAX_PATTERN_CHARS - 10)}` }));
    expect(long!.message.length).toBeLessThan(400);
  });

  it('refuses a schema nested too deep, with the deepest path', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < MAX_SCHEMA_DEPTH; level++) schema = { type: 'object', properties: { n: schema } };
    const [problem, ...others] = refusals(schema);
    expect(others).toEqual([]);
    expect(problem?.message).toBe(`nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    expect(problem?.path).toMatch(/^properties\.n\.properties\.n\./);
  });

  it('refuses a schema that is too big, by values or by bytes', () => {
    const manyValues = stringSchema({ enum: Array.from({ length: MAX_SCHEMA_NODES }, (_, index) => `v${index}`) });
    expect(refusals(manyValues)).toEqual([{ path: '', message: `has more than ${MAX_SCHEMA_NODES} values; simplify it` }]);
    const manyBytes = stringSchema({ description: 'x'.repeat(MAX_SCHEMA_BYTES) });
    expect(refusals(manyBytes)).toEqual([
      { path: '', message: expect.stringMatching(new RegExp(`^is \\d+ bytes long as JSON; at most ${MAX_SCHEMA_BYTES} are accepted$`)) },
    ]);
  });

  it('refuses $refs that would load anything, and never fetches', () => {
    const fetchSpy = jest.spyOn(globalThis, 'fetch');
    try {
      for (const ref of ['https://schemas.example.com/order.json', 'order.json#/definitions/id', '//example.com/x']) {
        const [problem, ...others] = refusals({ type: 'object', properties: { order: { $ref: ref } } });
        expect(others).toEqual([]);
        expect(problem?.path).toBe('properties.order.$ref');
        expect(problem?.message).toContain('only "#/..." references are allowed, nothing is loaded');
      }
      expect(fetchSpy).not.toHaveBeenCalled();
    } finally {
      fetchSpy.mockRestore();
    }
  });

  it('refuses unresolvable and recursive $refs, and $ref fan-out that would expand exponentially', () => {
    expect(refusals({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toEqual([
      expect.objectContaining({ path: 'properties.a.$ref', message: expect.stringContaining('does not point into this schema') }),
    ]);
    expect(refusals({ type: 'object', properties: { self: { $ref: '#' } } })).toEqual([
      expect.objectContaining({ path: 'properties.self.$ref', message: expect.stringContaining('recursive schemas are not supported') }),
    ]);
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let level = 1; level < 40; level++) defs[`d${level}`] = { allOf: [{ $ref: `#/$defs/d${level - 1}` }, { $ref: `#/$defs/d${level - 1}` }] };
    const bomb = timed(() => refusals({ type: 'object', $defs: defs, properties: { value: { $ref: '#/$defs/d39' } } }));
    expect(bomb.result).toEqual([{ path: '', message: expect.stringContaining('once its $refs are followed') }]);
    expect(bomb.ms).toBeLessThan(LINEAR_BOUND_MS);
  });

  it('refuses uniqueItems without a small maxItems, nested $ids and other drafts', () => {
    expect(refusals({ type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } })).toEqual([
      expect.objectContaining({ path: 'properties.tags.uniqueItems' }),
    ]);
    expect(compileToolSchema({ type: 'object', properties: { tags: { type: 'array', uniqueItems: true, maxItems: 20 } } }).ok).toBe(true);
    expect(refusals({ type: 'object', properties: { a: { $id: 'https://example.com/a', type: 'string' } } })).toEqual([
      expect.objectContaining({ path: 'properties.a.$id' }),
    ]);
    expect(refusals({ type: 'object', $schema: 'http://json-schema.org/draft-04/schema#' })).toEqual([
      expect.objectContaining({ path: '$schema' }),
    ]);
    expect(compileToolSchema({ type: 'object', $schema: 'http://json-schema.org/draft-07/schema#' }).ok).toBe(true);
  });

  it('lists several problems of one schema at once', () => {
    const problems = refusals({ type: 'object', properties: { a: { type: 'string', pattern: '(a)\\1' }, b: { type: 'string', maxLength: -1 } } });
    expect(problems.map((problem) => problem.path)).toEqual(['properties.a.pattern', 'properties.b.maxLength']);
  });
});

describe('compileToolSchema: OpenAI-style schemas', () => {
  const booking = {
    type: 'object',
    description: 'Books a table',
    properties: {
      name: { type: 'string', description: 'Guest name', minLength: 1 },
      email: { type: 'string', format: 'email' },
      date: { type: 'string', format: 'date', description: 'YYYY-MM-DD' },
      seating: { type: 'string', enum: ['inside', 'terrace'] },
      code: { type: 'string', pattern: '^[A-Z]{2}-\\d{4}$' },
      notes: { type: ['string', 'null'] },
      address: {
        type: 'object',
        properties: { street: { type: 'string' }, city: { type: 'string' } },
        required: ['street', 'city'],
        additionalProperties: false,
      },
      guests: {
        type: 'array',
        maxItems: 12,
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
          required: ['name'],
          additionalProperties: false,
        },
      },
    },
    required: ['name', 'date'],
    additionalProperties: false,
  };
  const valid = {
    name: 'Ada',
    email: 'ada@example.com',
    date: '2025-07-01',
    seating: 'terrace',
    code: 'AB-1234',
    notes: null,
    address: { street: '1 Main St', city: 'Springfield' },
    guests: [{ name: 'Bob', age: 40 }, { name: 'Cy' }],
  };

  it('compiles and accepts valid arguments', () => {
    expect(compiled(booking).problems(valid)).toBeUndefined();
    expect(compiled(booking).problems({ name: 'Ada', date: '2024-02-29' })).toBeUndefined();
  });

  it.each([
    [{ ...valid, date: '2025-02-30' }, '/date: must match format "date"'],
    [{ ...valid, email: 'not an email' }, '/email: must match format "email"'],
    [{ ...valid, seating: 'roof' }, '/seating: must be one of ["inside","terrace"]'],
    [{ ...valid, code: 'ab-1234' }, '/code: must match pattern "^[A-Z]{2}-\\d{4}$"'],
    [{ ...valid, pets: 2 }, '/pets: is not an allowed property'],
    [{ ...valid, address: { street: '1 Main St' } }, '/address/city: is required'],
    [{ ...valid, guests: [{ age: 3 }] }, '/guests/0/name: is required'],
    [{ ...valid, guests: [{ name: 'Bob', age: -1 }] }, '/guests/0/age: must be >= 0'],
    [{ date: '2025-07-01' }, '/name: is required'],
  ])('refuses invalid arguments %#', (args, problem) => {
    expect(compiled(booking).problems(args)).toBe(`arguments do not match the tool's parameters: ${problem}`);
  });

  it.each([
    ['date-time', '2025-07-01T19:30:00Z', '2025-07-01 19:30'],
    ['time', '19:30:00+02:00', '25:00:00Z'],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', '123e4567'],
    ['ipv4', '192.168.0.1', '256.1.1.1'],
    ['ipv6', '2001:db8::1', '2001:db8:::1'],
    ['hostname', 'api.example.com', '-bad-.example.com'],
    ['duration', 'P1DT2H', 'PT'],
    ['uri', 'https://example.com/a?b=c', 'not a uri'],
  ])('checks format %s', (format, good, bad) => {
    const validator = compiled(stringSchema({ format }));
    expect(validator.problems({ value: good })).toBeUndefined();
    expect(validator.problems({ value: bad })).toBe(`arguments do not match the tool's parameters: /value: must match format "${format}"`);
  });

  it('ignores unknown formats and keywords, as OpenAI-style schemas carry some', () => {
    const validator = compiled({ type: 'object', strict: true, properties: { phone: { type: 'string', format: 'phone', 'x-hint': 1 } } });
    expect(validator.problems({ phone: 'anything' })).toBeUndefined();
  });

  it('follows local $refs, and keeps tools with the same $id apart', () => {
    const schema = (digits: number) => ({
      $id: 'https://example.com/tool.json',
      type: 'object',
      $defs: { id: { type: 'string', pattern: `^[0-9]{${digits}}$` } },
      properties: { orderId: { $ref: '#/$defs/id' } },
    });
    const six = compiled(schema(6));
    const four = compiled(schema(4));
    expect(six.problems({ orderId: '123456' })).toBeUndefined();
    expect(four.problems({ orderId: '1234' })).toBeUndefined();
    expect(four.problems({ orderId: '123456' })).toContain('must match pattern "^[0-9]{4}$"');
  });
});
