import { canonicalBaseUrl, resolveApiUrl } from './api-url';

describe('resolveApiUrl', () => {
  it.each([
    ['https://api.openai.com', 'https://api.openai.com/v1/chat/completions'],
    ['https://api.openai.com/', 'https://api.openai.com/v1/chat/completions'],
    ['https://api.openai.com/v1', 'https://api.openai.com/v1/chat/completions'],
    ['https://api.openai.com/v1/', 'https://api.openai.com/v1/chat/completions'],
    ['https://api.groq.com/openai/v1', 'https://api.groq.com/openai/v1/chat/completions'],
    ['http://localhost:11434/v1', 'http://localhost:11434/v1/chat/completions'],
    ['http://10.0.0.5:8000', 'http://10.0.0.5:8000/v1/chat/completions'],
  ])('joins %s without doubling /v1', (baseUrl, expected) => {
    expect(resolveApiUrl(baseUrl, '/v1/chat/completions')).toBe(expected);
  });

  it('refuses what is not an absolute http(s) URL, naming it', () => {
    expect(() => resolveApiUrl('api.openai.com/v1', '/v1/audio/speech')).toThrow('invalid base URL "api.openai.com/v1"');
    expect(() => resolveApiUrl('ftp://host/v1', '/v1/audio/speech')).toThrow('only http and https');
    expect(() => resolveApiUrl('https://host/v1?key=1', '/v1/audio/speech')).toThrow('query string');
  });

  it('spells equivalent base URLs the same way (one circuit breaker per endpoint)', () => {
    expect(canonicalBaseUrl('https://api.openai.com')).toBe('https://api.openai.com/v1');
    expect(canonicalBaseUrl('https://api.openai.com/v1/')).toBe('https://api.openai.com/v1');
  });
});
