import { EngineError } from '../../contracts';
import { buildWhisperVocabulary, WHISPER_DIMENSIONS } from '@switchboard/testing';
import { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';
import { WhisperSpecialTokens } from './whisper-special-tokens';

describe('WhisperSpecialTokens', () => {
  const vocabulary = buildWhisperVocabulary(WHISPER_DIMENSIONS.small);
  const tokenizer = ByteLevelBpeTokenizer.fromJson(JSON.stringify(vocabulary.tokenizerJson));
  const { ids } = vocabulary;

  it('takes the ids from generation_config.json, not from constants', () => {
    // Deliberately odd ids: only reading them from the file can produce these.
    const generation = {
      decoder_start_token_id: 7,
      eos_token_id: [9, 10],
      no_timestamps_token_id: 11,
      lang_to_id: { '<|en|>': 12, '<|de|>': 13 },
      task_to_id: { transcribe: 14, translate: 15 },
      prev_sot_token_id: 16,
      is_multilingual: true,
      max_length: 40,
    };
    const tokens = new WhisperSpecialTokens({ config: {}, generation, tokenizer }, 'whisper');
    expect(tokens.endOfText).toBe(9);
    expect(tokens.prompt(tokenizer, { language: 'de' })).toEqual([7, 13, 14, 11]);
    expect(tokens.maxLength).toBe(40);
  });

  it('falls back to the tokenizer added tokens when the configs say nothing; English-only prompt has no language', () => {
    const tokens = new WhisperSpecialTokens({ config: {}, generation: {}, tokenizer }, 'whisper');
    expect(tokens.startOfTranscript).toBe(ids.startOfTranscript);
    expect(tokens.endOfText).toBe(ids.endOfText);
    expect(tokens.multilingual).toBe(false);
    expect(tokens.prompt(tokenizer, {})).toEqual([ids.startOfTranscript, ids.noTimestamps]);
  });

  it('suppresses every special token except end-of-text, plus the configured ones', () => {
    const tokens = new WhisperSpecialTokens({ config: {}, generation: { suppress_tokens: [5], begin_suppress_tokens: [6, ids.endOfText] }, tokenizer }, 'whisper');
    expect(tokens.suppressed.has(5)).toBe(true);
    expect(tokens.suppressed.has(ids.noTimestamps)).toBe(true);
    expect(tokens.suppressed.has(ids.transcribe)).toBe(true);
    expect(tokens.suppressed.has(ids.endOfText)).toBe(false);
    expect([...tokens.beginSuppressed]).toEqual([6, ids.endOfText]);
  });

  it('puts previous text after <|startofprev|>, keeping the newest tokens within half the context', () => {
    const generation = { lang_to_id: { '<|en|>': ids.languages['en']! }, max_length: 20 };
    const tokens = new WhisperSpecialTokens({ config: {}, generation, tokenizer }, 'whisper');
    const prompt = tokens.prompt(tokenizer, { previousText: 'order number four five six seven eight nine ten eleven twelve' });
    expect(prompt[0]).toBe(ids.startOfPrev);
    const context = prompt.slice(1, prompt.indexOf(ids.startOfTranscript));
    expect(context.length).toBe(9);
    expect(tokenizer.decode(context).endsWith(' eleven twelve')).toBe(true);
    expect(prompt.slice(-4)).toEqual([ids.startOfTranscript, ids.languages['en'], ids.transcribe, ids.noTimestamps]);
  });

  it('refuses a language the model lacks with a clear bad_request', () => {
    const tokens = new WhisperSpecialTokens({ config: {}, generation: { lang_to_id: { '<|en|>': ids.languages['en']! } }, tokenizer }, 'whisper');
    expect(() => tokens.prompt(tokenizer, { language: 'xx' })).toThrow(EngineError);
    expect(() => tokens.prompt(tokenizer, { language: 'xx' })).toThrow(/language 'xx' is not one this Whisper model knows \(en\)/);
  });
});
