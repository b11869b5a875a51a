import { splitSentences } from './sentence-splitter';

describe('splitSentences', () => {
  it('splits at sentence ends and keeps the punctuation', () => {
    expect(splitSentences('Hello there. How can I help? Great!  Bye…')).toEqual(['Hello there.', 'How can I help?', 'Great!', 'Bye…']);
  });

  it('does not split after abbreviations, initials or inside numbers', () => {
    expect(splitSentences('Dr. Smith paid $3.50 on Jan. 5, e.g. by card. J. Doe agreed.')).toEqual([
      'Dr. Smith paid $3.50 on Jan. 5, e.g. by card.',
      'J. Doe agreed.',
    ]);
  });

  it('still splits after words that only look like abbreviations', () => {
    expect(splitSentences('The answer is no. I sat. Thanks.')).toEqual(['The answer is no.', 'I sat.', 'Thanks.']);
  });

  it('keeps closing quotes with their sentence and text without a final mark', () => {
    expect(splitSentences('She said "yes." Then nothing')).toEqual(['She said "yes."', 'Then nothing']);
  });

  it('splits an over-long sentence at a comma or space before the limit', () => {
    const sentences = splitSentences('one two three four, five six seven eight nine ten', 24);
    expect(sentences).toEqual(['one two three four,', 'five six seven eight', 'nine ten']);
    for (const sentence of sentences) expect(sentence.length).toBeLessThanOrEqual(24);
  });

  it('returns nothing for empty or blank text', () => {
    expect(splitSentences('')).toEqual([]);
    expect(splitSentences('  \n ')).toEqual([]);
  });
});
