import { RAW_EXCERPT_CHARS, rawExcerpt } from './raw-excerpt';

describe('rawExcerpt', () => {
  it('keeps short frames whole', () => {
    expect(rawExcerpt('{"event":"mark"}')).toBe('{"event":"mark"}');
  });

  it('truncates long frames', () => {
    const excerpt = rawExcerpt(`{"payload":"${'A'.repeat(1000)}"}`);
    expect(excerpt).toHaveLength(RAW_EXCERPT_CHARS + 1);
    expect(excerpt.endsWith('…')).toBe(true);
  });

  it('never includes custom parameters, which carry the stream token', () => {
    const secret = 'Zm9vYmFyYmF6cXV4LXNlY3JldC10b2tlbi12YWx1ZQ';
    const text = `{"event":"start","start":{"callSid":"CA1","customParameters":{"callId":"c1","streamToken":"${secret}"}}}`;
    const excerpt = rawExcerpt(text);
    expect(excerpt).not.toContain(secret);
    expect(excerpt).toContain('"callSid":"CA1"');
    expect(excerpt).toContain('[redacted]');
  });

  it('describes non-text input instead of failing', () => {
    expect(rawExcerpt(undefined)).toBe('<undefined>');
    expect(rawExcerpt(Buffer.from('x'))).toBe('<object>');
  });
});
