import { EngineError } from '../contracts';
import { engineErrorFromResponse, engineErrorFromThrown, parseRetryAfterMs } from './http-error-mapping';

const failure = (status: number, bodyText = '', headers: Record<string, string> = {}) =>
  engineErrorFromResponse({ engine: 'test-engine', status, headers: new Headers(headers), bodyText, apiKey: 'sk-secret-key-123', nowMs: 1_000_000 });

describe('engineErrorFromResponse', () => {
  it.each([
    [400, 'bad_request', false],
    [401, 'unauthorized', false],
    [403, 'unauthorized', false],
    [404, 'bad_request', false],
    [422, 'bad_request', false],
    [408, 'timeout', true],
    [409, 'unavailable', true],
    [429, 'rate_limited', true],
    [500, 'unavailable', true],
    [502, 'unavailable', true],
    [503, 'unavailable', true],
  ])('maps HTTP %i to %s (retryable: %s)', (status, code, retryable) => {
    const error = failure(status);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ engine: 'test-engine', code, retryable, httpStatus: status });
  });

  it('keeps the server message from the usual error shapes', () => {
    expect(failure(400, '{"error":{"message":"model foo not found"}}').message).toContain('model foo not found');
    expect(failure(400, '{"error":"ollama says no"}').message).toContain('ollama says no');
    expect(failure(422, '{"detail":[{"msg":"field required"}]}').message).toContain('field required');
    expect(failure(502, '<html>Bad gateway</html>').message).toContain('<html>Bad gateway</html>');
  });

  it('never repeats the API key, even when the server echoes it', () => {
    const error = failure(401, '{"error":{"message":"Incorrect API key provided: sk-secret-key-123"}}');
    expect(error.message).not.toContain('sk-secret-key-123');
    expect(error.message).toContain('[redacted]');
  });

  it('treats an exhausted quota (429 insufficient_quota) as not retryable', () => {
    expect(failure(429, '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}')).toMatchObject({ code: 'rate_limited', retryable: false });
  });

  it('carries Retry-After on 429', () => {
    expect(failure(429, '', { 'retry-after': '2' }).retryAfterMs).toBe(2000);
  });
});

describe('parseRetryAfterMs', () => {
  const parse = (headers: Record<string, string>) => parseRetryAfterMs(new Headers(headers), Date.parse('2025-01-01T00:00:00Z'));

  it('reads seconds, fractional seconds, an HTTP date and OpenAI retry-after-ms', () => {
    expect(parse({ 'retry-after': '3' })).toBe(3000);
    expect(parse({ 'retry-after': '0.25' })).toBe(250);
    expect(parse({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' })).toBe(5000);
    expect(parse({ 'retry-after-ms': '120', 'retry-after': '9' })).toBe(120);
  });

  it('ignores what it cannot read and never goes negative', () => {
    expect(parse({})).toBeUndefined();
    expect(parse({ 'retry-after': 'soon' })).toBeUndefined();
    expect(parse({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' })).toBe(0);
  });
});

describe('engineErrorFromThrown', () => {
  it('maps connection failures to retryable unavailable', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
    expect(engineErrorFromThrown('e', refused)).toMatchObject({ code: 'unavailable', retryable: true });
    const reset = new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(engineErrorFromThrown('e', reset)).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('maps a request that cannot be sent at all (bad port, bad URL) to non-retryable bad_request', () => {
    expect(engineErrorFromThrown('e', new TypeError('fetch failed', { cause: new Error('bad port') }))).toMatchObject({ code: 'bad_request', retryable: false });
  });

  it('passes EngineErrors through untouched', () => {
    const original = new EngineError('e', 'malformed_response', 'x', false);
    expect(engineErrorFromThrown('e', original)).toBe(original);
  });
});
