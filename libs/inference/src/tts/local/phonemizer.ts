/**
 * Text -> phonemes for neural TTS models (Kokoro and Piper take IPA phonemes as espeak-ng writes
 * them). Injected, because espeak-ng is GPL-3.0 and must never be linked into the product: the
 * shipped implementations either run it as a separate program or do without it.
 */
export interface Phonemizer {
  readonly name: string;
  /** One sentence of text -> a phoneme string (one character per phoneme symbol). */
  phonemize(text: string, options: { voice: string; signal?: AbortSignal }): Promise<string>;
}

/**
 * The fallback when no phonemizer program is installed: lower-cased text, whitespace collapsed,
 * each letter standing for itself. Real Kokoro/Piper voices were trained on IPA, so with this
 * they mispronounce; it exists so the engines can be wired and tested without espeak-ng (the
 * stand-in models accept it, and real voices still produce audio).
 */
export class PlainCharacterPhonemizer implements Phonemizer {
  readonly name = 'plain-characters';

  async phonemize(text: string): Promise<string> {
    return text.toLowerCase().replace(/\s+/g, ' ').trim();
  }
}
