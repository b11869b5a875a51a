import { byteCharsToBytes } from '../../asr/local/byte-level-encoding';
import { buildDecoderLlmVocabulary, QWEN2_SPLIT_PATTERN } from '@switchboard/testing';
import { LlmTokenizer } from './llm-tokenizer';
import { compileNormalizer, compilePreTokenizer, toJsRegexSource } from './pre-tokenizer';

const words = (split: (text: string) => string[], text: string): string[] => split(text).map((word) => new TextDecoder().decode(byteCharsToBytes(word)));

describe('pre-tokenizers from tokenizer.json', () => {
  const qwen = compilePreTokenizer('t', {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: QWEN2_SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, use_regex: false },
    ],
  });

  it("splits like Qwen2's regex: single digits, punctuation runs with their newlines, case-insensitive contractions", () => {
    expect(words(qwen, 'Hello world 123!!\n\nOK')).toEqual(['Hello', ' world', ' ', '1', '2', '3', '!!\n\n', 'OK']);
    expect(words(qwen, "I'M sure it's")).toEqual(['I', "'M", ' sure', ' it', "'s"]);
    expect(words(qwen, '(order)\tnow')).toEqual(['(order', ')', '\tnow']);
  });

  it('maps every byte to its byte-level character (a space is Ġ)', () => {
    expect(qwen(' café')).toEqual(['\u0120caf\u00c3\u00a9']);
  });

  it("converts Rust's scoped (?i:...) groups, leaving \\p{..} escapes and classes alone", () => {
    expect(toJsRegexSource("(?i:'s|'t)|\\p{L}+")).toBe("(?:'[sS]|'[tT])|\\p{L}+");
    expect(toJsRegexSource('(?i:[a-z]\\p{Lu})x')).toBe('(?:[a-z]\\p{Lu})x');
    expect(() => new RegExp(toJsRegexSource(QWEN2_SPLIT_PATTERN), 'gu')).not.toThrow();
  });

  it('splits digits one by one before the GPT-2 regex (SmolLM2)', () => {
    const smol = compilePreTokenizer('t', {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Digits', individual_digits: true },
        { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
      ],
    });
    expect(words(smol, 'abc 2024 ok')).toEqual(['abc', ' ', '2', '0', '2', '4', ' ok']);
  });

  it('refuses what is not byte-level BPE with a model_missing error', () => {
    expect(() => compilePreTokenizer('t', { type: 'Metaspace' })).toThrow(/expected ByteLevel/);
    expect(() => compilePreTokenizer('t', { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'ByteLevel' }] })).toThrow(/unsupported pre_tokenizer step Whitespace/);
    expect(() => compileNormalizer('t', { type: 'Lowercase' })).toThrow(expect.objectContaining({ code: 'model_missing' }));
    expect(compileNormalizer('t', { type: 'NFC' })('cafe\u0301')).toBe('caf\u00e9');
  });
});

describe('LlmTokenizer (Qwen2.5-style tokenizer.json)', () => {
  const vocabulary = buildDecoderLlmVocabulary(320);
  const json = JSON.stringify(vocabulary.tokenizerJson);
  const tokenizer = LlmTokenizer.fromJson(json, 'test');

  it('encodes added tokens written in the text as their single ids, and the rest with BPE', () => {
    const ids = tokenizer.encode('<|im_start|>user\nhi<|im_end|>\n<tool_call></tool_call>');
    expect(ids[0]).toBe(vocabulary.ids.imStart);
    expect(ids).toContain(vocabulary.ids.imEnd);
    expect(ids.slice(-2)).toEqual([vocabulary.ids.toolCallOpen, vocabulary.ids.toolCallClose]);
    expect(tokenizer.idOf('<|im_start|>')).toBe(vocabulary.ids.imStart);
  });

  it.each(['Hi, I am calling about my order.', 'Grüße aus Köln – café ☎ 👋', "  What's  up?\n\n12345"])('round-trips %j', (text) => {
    expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });

  it('applies the learned merges (far fewer tokens than bytes for trained words)', () => {
    const text = ' the order number please';
    expect(tokenizer.encode(text).length).toBeLessThan(new TextEncoder().encode(text).length / 2);
  });

  it('normalizes to NFC before encoding, as Qwen2 does', () => {
    expect(tokenizer.encode('cafe\u0301')).toEqual(tokenizer.encode('caf\u00e9'));
  });

  it('decodes added tokens as their text and skips special ones', () => {
    const ids = [vocabulary.ids.imStart, ...tokenizer.encode('ok'), vocabulary.ids.toolCallOpen, vocabulary.ids.imEnd];
    expect(tokenizer.decode(ids)).toBe('ok<tool_call>');
    expect(new TextDecoder().decode(tokenizer.bytesOf(vocabulary.ids.toolCallClose))).toBe('</tool_call>');
  });

  it('takes a whole-word vocab entry directly when ignore_merges is set (Llama 3)', () => {
    const parsed = JSON.parse(json);
    // A word in the vocab that the merges alone would never build.
    parsed.model.vocab['\u0120zq'] = 9999;
    const plain = LlmTokenizer.fromJson(JSON.stringify(parsed), 'test');
    parsed.model.ignore_merges = true;
    const ignoring = LlmTokenizer.fromJson(JSON.stringify(parsed), 'test');
    expect(plain.encode(' zq')).not.toEqual([9999]);
    expect(ignoring.encode(' zq')).toEqual([9999]);
  });
});
