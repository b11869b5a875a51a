import { EspeakProcessPhonemizer } from './espeak-process-phonemizer';
import { PlainCharacterPhonemizer } from './phonemizer';

describe('PlainCharacterPhonemizer (fallback without espeak-ng)', () => {
  it('lower-cases and collapses whitespace', async () => {
    expect(await new PlainCharacterPhonemizer().phonemize('  Hello\n  World! ')).toBe('hello world!');
  });
});

describe('EspeakProcessPhonemizer', () => {
  it('says clearly when the program is not installed', async () => {
    const missing = new EspeakProcessPhonemizer({ executable: '/nonexistent/espeak-ng' });
    expect(await EspeakProcessPhonemizer.isAvailable('/nonexistent/espeak-ng')).toBe(false);
    await expect(missing.phonemize('hello', { voice: 'en-us' })).rejects.toMatchObject({ code: 'unavailable', retryable: false });
    await expect(missing.phonemize('hello', { voice: 'en-us' })).rejects.toThrow(/not installed/);
  });

  it('refuses voice names that are not espeak voice names', async () => {
    await expect(new EspeakProcessPhonemizer().phonemize('hello', { voice: 'en-us; rm -rf /' })).rejects.toMatchObject({ code: 'bad_request' });
  });

  it('phonemizes with the installed espeak-ng (skipped when it is not installed)', async () => {
    if (!(await EspeakProcessPhonemizer.isAvailable())) {
      console.log('skipped: espeak-ng is not installed here (apt-get install espeak-ng to run this test)');
      return;
    }
    const phonemes = await new EspeakProcessPhonemizer().phonemize('Hello world.', { voice: 'en-us' });
    expect(phonemes).toMatch(/^h.*w.*\.$/);
    expect(phonemes).not.toContain('_');
    expect(phonemes).toContain('ˈ');
  });
});
