import {
  REDACTED_HEADERS,
  REDACTED_QUERY_PARAMETERS,
  redactHeaders,
  redactError,
  redactQuery,
  redactRequest,
  redactResponse,
  redactStringFields,
  redactUrls,
} from './log-redaction';

describe('log redaction', () => {
  describe('redactUrls', () => {
    it('replaces the value of every listed query parameter, in any case, and keeps the rest of the URL', () => {
      for (const name of [...REDACTED_QUERY_PARAMETERS, 'API_KEY', 'Token', 'SIG']) {
        expect(redactUrls(`/v1/agents?limit=5&${name}=s3cret&page=2`)).toBe(`/v1/agents?limit=5&${name}=[redacted]&page=2`);
      }
      expect(redactUrls('https://api.example.com/v1/x?api_key=s3cret#frag')).toBe('https://api.example.com/v1/x?api_key=[redacted]#frag');
    });

    it('recognises a percent-encoded name, and leaves names that only contain a listed one', () => {
      expect(redactUrls('/x?api%5Fkey=s3cret')).toBe('/x?api%5Fkey=[redacted]');
      expect(redactUrls('/x?monkey=banana&tokens=3&keyword=a')).toBe('/x?monkey=banana&tokens=3&keyword=a');
      // Malformed percent-encoding is compared as written, never thrown on.
      expect(redactUrls('/x?%E0%A4%A=1&token=s3cret')).toBe('/x?%E0%A4%A=1&token=[redacted]');
    });

    it('drops the whole query of a signed recording link, relative or absolute', () => {
      const callId = '3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';
      expect(redactUrls(`/recordings/${callId}.wav?expires=1700000000&signature=${'ab'.repeat(32)}`)).toBe(`/recordings/${callId}.wav`);
      expect(redactUrls(`https://switchboard.example/recordings/${callId}.wav?expires=1&signature=ff`)).toBe(`https://switchboard.example/recordings/${callId}.wav`);
    });

    it('redacts URLs inside free text (an error message or stack) and a URL\'s password', () => {
      const text = 'GET https://hooks.example/in?token=s3cret failed; fetched /recordings/c1.wav?expires=1&signature=ff at postgres://app:pa55@db:5432/x';
      const redacted = redactUrls(text);
      expect(redacted).toBe('GET https://hooks.example/in?token=[redacted] failed; fetched /recordings/c1.wav at postgres://app:[redacted]@db:5432/x');
      for (const secret of ['s3cret', 'signature=ff', 'pa55']) expect(redacted).not.toContain(secret);
    });

    it('returns text without a secret unchanged', () => {
      for (const text of ['/v1/agents', '/v1/calls?status=ended&limit=10', 'user@example.com wrote', 'a plain message']) {
        expect(redactUrls(text)).toBe(text);
      }
    });
  });

  it('redactHeaders replaces each listed header in any case, copies, and keeps the others', () => {
    const headers: Record<string, unknown> = { host: 'a', 'X-Api-Key': 'k1', 'set-cookie': ['s=1'] };
    for (const name of REDACTED_HEADERS) headers[name] = 'secret';
    const redacted = redactHeaders(headers);
    expect(redacted['host']).toBe('a');
    expect(redacted['X-Api-Key']).toBe('[redacted]');
    expect(redacted['set-cookie']).toBe('[redacted]');
    for (const name of REDACTED_HEADERS) expect(redacted[name]).toBe('[redacted]');
    expect(headers['X-Api-Key']).toBe('k1');
  });

  it('redactQuery replaces listed parameters of a parsed query and empties a recording link\'s', () => {
    expect(redactQuery({ Api_Key: 'k', limit: '5', token: ['a', 'b'] }, '/v1/agents?Api_Key=k&limit=5')).toEqual({ Api_Key: '[redacted]', limit: '5', token: '[redacted]' });
    expect(redactQuery({ expires: '1', signature: 'ff' }, '/recordings/c1.wav?expires=1&signature=ff')).toEqual({});
    expect(redactQuery(undefined, '/x')).toBeUndefined();
  });

  it('redactRequest keeps pino\'s request fields, redacted, without touching the live headers', () => {
    const headers = { 'x-api-key': 'k1', accept: '*/*' };
    const serialized = redactRequest({ id: 'r1', method: 'GET', url: '/v1/agents?key=k2', query: { key: 'k2' }, params: {}, headers, remoteAddress: '127.0.0.1', remotePort: 5 });
    expect(serialized).toEqual({
      id: 'r1',
      method: 'GET',
      url: '/v1/agents?key=[redacted]',
      query: { key: '[redacted]' },
      params: {},
      headers: { 'x-api-key': '[redacted]', accept: '*/*' },
      remoteAddress: '127.0.0.1',
      remotePort: 5,
    });
    expect(headers['x-api-key']).toBe('k1');
  });

  it('redactResponse redacts set-cookie; redactStringFields redacts strings only and returns the same object when nothing changed', () => {
    expect(redactResponse({ statusCode: 200, headers: { 'set-cookie': 'sid=1', 'content-type': 'x' } })).toEqual({ statusCode: 200, headers: { 'set-cookie': '[redacted]', 'content-type': 'x' } });
    const clean = { callId: 'c', bytes: 3 };
    expect(redactStringFields(clean)).toBe(clean);
    expect(redactStringFields({ url: 'https://x/?sig=abc', n: 1 })).toEqual({ url: 'https://x/?sig=[redacted]', n: 1 });
  });

  it('redactError redacts a serialized error\'s message and stack, and a string thrown as an error', () => {
    const error = { type: 'Error', message: 'GET https://x/?key=k1 failed', stack: 'Error: GET https://x/?key=k1 failed\n    at f (file.ts:1:1)' };
    expect(redactError(error)).toEqual({ type: 'Error', message: 'GET https://x/?key=[redacted] failed', stack: 'Error: GET https://x/?key=[redacted] failed\n    at f (file.ts:1:1)' });
    expect(redactError('https://x/?sig=abc')).toBe('https://x/?sig=[redacted]');
    expect(redactError(undefined)).toBeUndefined();
  });
});
