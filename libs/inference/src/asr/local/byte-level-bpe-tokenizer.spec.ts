import { EngineError } from '../../contracts';
import { buildWhisperVocabulary, WHISPER_DIMENSIONS } from '@switchboard/testing';
import { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';
import { BYTE_TO_CHAR, CHAR_TO_BYTE } from './byte-level-encoding';

describe('ByteLevelBpeTokenizer (tokenizer.json, Whisper/GPT-2 byte-level BPE)', () => {
  const vocabulary = buildWhisperVocabulary(WHISPER_DIMENSIONS.small);
  const json = JSON.stringify(vocabulary.tokenizerJson);
  const tokenizer = ByteLevelBpeTokenizer.fromJson(json);

  it('maps all 256 bytes to distinct printable characters and back', () => {
    expect(new Set(BYTE_TO_CHAR).size).toBe(256);
    expect(BYTE_TO_CHAR[32]).toBe('\u0120'); // a space is 'Ġ' in GPT-2 vocabularies
    expect(BYTE_TO_CHAR[65]).toBe('A');
    BYTE_TO_CHAR.forEach((char, byte) => expect(CHAR_TO_BYTE.get(char)).toBe(byte));
  });

  it.each(['Hi, I am calling about my order.', 'Grüße aus Köln – café ☎ 👋', "  What's  up?\n"])('round-trips %j', (text) => {
    expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });

  it('applies the learned merges (fewer tokens than bytes for trained words)', () => {
    const text = ' the order number';
    const ids = tokenizer.encode(text);
    expect(ids.length).toBeLessThan(new TextEncoder().encode(text).length);
    expect(ids.map((id) => tokenizer.tokenOf(id))).toContain('\u0120order');
  });

  it('skips special tokens when decoding unless asked to keep them', () => {
    const { startOfTranscript, noTimestamps, endOfText } = vocabulary.ids;
    const ids = [startOfTranscript, ...tokenizer.encode(' thank you'), noTimestamps, endOfText];
    expect(tokenizer.decode(ids)).toBe(' thank you');
    expect(tokenizer.decode(ids, { skipSpecial: false })).toBe('<|startoftranscript|> thank you<|notimestamps|><|endoftext|>');
    expect(tokenizer.isSpecial(endOfText)).toBe(true);
    expect(tokenizer.idOf('<|endoftext|>')).toBe(endOfText);
    expect(tokenizer.vocabSize).toBe(vocabulary.vocabSize);
  });

  it('decodes a multi-byte character split across tokens as one character', () => {
    const ids = tokenizer.encode('☎');
    expect(ids.length).toBe(3); // three UTF-8 bytes, no merge
    expect(tokenizer.decode(ids)).toBe('☎');
    expect(tokenizer.decode(ids.slice(0, 2))).toBe('\uFFFD'); // an incomplete character is replaced, not thrown on
  });

  it('reads merges written as pairs (newer tokenizers) the same as "a b" strings', () => {
    const parsed = JSON.parse(json);
    parsed.model.merges = parsed.model.merges.map((merge: string) => merge.split(' '));
    const pairs = ByteLevelBpeTokenizer.fromJson(JSON.stringify(parsed));
    const text = 'please transfer me to billing';
    expect(pairs.encode(text)).toEqual(tokenizer.encode(text));
  });

  it('refuses files that are not a BPE tokenizer with a non-retryable EngineError', () => {
    expect(() => ByteLevelBpeTokenizer.fromJson('{not json', 'whisper')).toThrow(EngineError);
    expect(() => ByteLevelBpeTokenizer.fromJson('{"model":{"type":"WordPiece","vocab":{}}}', 'whisper')).toThrow(/expected a BPE model/);
    try {
      ByteLevelBpeTokenizer.fromJson('{not json', 'whisper');
    } catch (error) {
      expect(error).toMatchObject({ engine: 'whisper', code: 'model_missing', retryable: false });
    }
  });
});
