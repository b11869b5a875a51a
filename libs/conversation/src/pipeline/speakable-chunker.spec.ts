import { SpeakableChunker, type SpeakableChunkerOptions } from './speakable-chunker';
import { normaliseSpeakableText } from './speakable-text-normaliser';

/** The whole reply in one delta, then flush. */
function chunksOf(text: string, options?: SpeakableChunkerOptions): string[] {
  const chunker = new SpeakableChunker(options);
  return [...chunker.push(text), ...chunker.flush()];
}

/** The reply in the given deltas, then flush. */
function chunksOfDeltas(deltas: readonly string[], options?: SpeakableChunkerOptions): string[] {
  const chunker = new SpeakableChunker(options);
  const chunks: string[] = [];
  for (const delta of deltas) chunks.push(...chunker.push(delta));
  chunks.push(...chunker.flush());
  return chunks;
}

/** Seeded pseudo-random numbers in [0, 1) (a linear congruential generator), so failures replay. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
}

function randomSplit(text: string, random: () => number, maxPiece: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    const length = Math.floor(random() * (maxPiece + 1)); // 0: an empty delta, which streams do send
    pieces.push(text.slice(start, start + length));
    start += length;
  }
  return pieces;
}

/** What every chunking must satisfy, whatever the text. */
function expectWellFormed(chunks: readonly string[], text: string): void {
  for (const chunk of chunks) {
    expect(chunk.length).toBeGreaterThan(0);
    expect(chunk).toBe(chunk.trim());
  }
  expect(chunks.join(' ')).toBe(normaliseSpeakableText(text));
}

describe('SpeakableChunker', () => {
  describe('where it cuts', () => {
    it('cuts the first chunk at the first clause boundary once it is minFirstChunkChars long, later ones at sentence ends', () => {
      const text = 'Thanks for waiting, I found your order. It shipped on Monday from our warehouse. It should arrive by Thursday, weather permitting.';
      expect(chunksOf(text)).toEqual([
        'Thanks for waiting,',
        'I found your order. It shipped on Monday from our warehouse.',
        'It should arrive by Thursday, weather permitting.',
      ]);
    });

    it('does not cut the first chunk before minFirstChunkChars, not even at a sentence end', () => {
      expect(chunksOf('Sure. Let me check that for you, one moment.')).toEqual(['Sure. Let me check that for you,', 'one moment.']);
      expect(chunksOf('Yes, of course I can help.')).toEqual(['Yes, of course I can help.']);
      expect(chunksOf('Hi! How are you doing today? Good.', { minFirstChunkChars: 3 })).toEqual(['Hi!', 'How are you doing today? Good.']);
    });

    it('merges sentences shorter than minChunkChars with the next one, and keeps later clause boundaries inside', () => {
      const text = 'Here is the plan. First, we check. Then we call you back, or we send an e-mail. Done. Bye.';
      expect(chunksOf(text, { minFirstChunkChars: 12, minChunkChars: 40 })).toEqual([
        'Here is the plan.',
        'First, we check. Then we call you back, or we send an e-mail.',
        'Done. Bye.',
      ]);
    });

    it('cuts after ! ? … and the CJK full stops when followed by whitespace, and after closing quotes and brackets', () => {
      const options = { minFirstChunkChars: 1, minChunkChars: 1 };
      expect(chunksOf('Really! Yes? Ok… Fine.', options)).toEqual(['Really!', 'Yes?', 'Ok…', 'Fine.']);
      expect(chunksOf('你好。 我们明天开门！ 好吗？ 好', options)).toEqual(['你好。', '我们明天开门！', '好吗？', '好']);
      expect(chunksOf('He said "stop." Then (he left.) Gone.', options)).toEqual(['He said "stop."', 'Then (he left.)', 'Gone.']);
    });

    it('does not cut after a CJK full stop with no whitespace after it (the chunks must join back with spaces)', () => {
      expect(chunksOf('你好。我们明天开门！好吗？', { minFirstChunkChars: 1, minChunkChars: 1 })).toEqual(['你好。我们明天开门！好吗？']);
    });

    it('forces a cut at the last sentence end, else clause boundary, else space, when a chunk would pass maxChunkChars', () => {
      const options = { minFirstChunkChars: 5, minChunkChars: 20, maxChunkChars: 40 };
      // First chunk: "alpha beta gamma delta," is a clause (first-chunk cut); then no sentence end within 40.
      expect(chunksOf('Alpha beta gamma delta, epsilon zeta eta theta, iota kappa lambda mu nu xi omicron pi rho.', options)).toEqual([
        'Alpha beta gamma delta,',
        'epsilon zeta eta theta,',
        'iota kappa lambda mu nu xi omicron pi',
        'rho.',
      ]);
      // A short sentence inside the window is preferred to a later clause only when it leaves minChunkChars.
      expect(chunksOf('Start here, then: One two. Three four five six seven eight nine ten eleven twelve.', options)).toEqual([
        'Start here,',
        'then: One two. Three four five six seven',
        'eight nine ten eleven twelve.',
      ]);
    });

    it('never cuts inside a word, even one longer than maxChunkChars: it is cut off at the spaces around it', () => {
      const longWord = 'x'.repeat(60);
      expect(chunksOf(`See ${longWord} and more words here.`, { minFirstChunkChars: 5, minChunkChars: 10, maxChunkChars: 30 })).toEqual(['See', longWord, 'and more words here.']);
      expect(chunksOf(longWord, { maxChunkChars: 50 })).toEqual([longWord]);
    });

    it('keeps every chunk within maxChunkChars when there are spaces to cut at', () => {
      const text = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
      const chunks = chunksOf(text, { maxChunkChars: 50 });
      expect(chunks.length).toBeGreaterThan(5);
      for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(50);
      expectWellFormed(chunks, text);
    });
  });

  describe('what it does not cut', () => {
    const everywhere = { minFirstChunkChars: 1, minChunkChars: 1 };

    it('does not cut inside numbers, times or amounts', () => {
      expect(chunksOf('It costs 3.5 dollars, or 1,000 cents at 10:30 today.', { ...everywhere, minFirstChunkChars: 100 })).toEqual([
        'It costs 3.5 dollars, or 1,000 cents at 10:30 today.',
      ]);
      expect(chunksOf('Pi is 3.14159. Next.', everywhere)).toEqual(['Pi is 3.14159.', 'Next.']);
    });

    it('does not cut after common abbreviations', () => {
      const text = 'Ask Mr. Smith, Mrs. Jones or Dr. Who at St. Louis. Bring a pen, paper etc. Then sign. Cats vs. Dogs, e.g. Tom, i.e. Jerry.';
      expect(chunksOf(text, { minFirstChunkChars: 1, minChunkChars: 1, maxChunkChars: 500 })).toEqual([
        'Ask Mr. Smith,',
        'Mrs. Jones or Dr. Who at St. Louis.',
        'Bring a pen, paper etc. Then sign.',
        'Cats vs. Dogs, e.g. Tom, i.e. Jerry.',
      ]);
    });

    it('does not cut inside URLs or e-mail addresses, and cuts after the full stop that ends them', () => {
      const text = 'Go to https://example.com/help?topic=billing.v2 now. Or write to help.desk@example.co.uk. We answer fast.';
      expect(chunksOf(text, everywhere)).toEqual(['Go to https://example.com/help?topic=billing.v2 now.', 'Or write to help.desk@example.co.uk.', 'We answer fast.']);
    });

    it('does not cut at an ellipsis in mid-sentence, but does where the next sentence starts', () => {
      expect(chunksOf('I was... thinking. Well… maybe not. Wait... Yes.', everywhere)).toEqual(['I was... thinking.', 'Well… maybe not.', 'Wait...', 'Yes.']);
    });

    it('does not cut after a dot followed by a lowercase word (an abbreviation it does not know)', () => {
      expect(chunksOf('It takes approx. ten minutes, about 10 min. or so.', everywhere)).toEqual(['It takes approx. ten minutes,', 'about 10 min. or so.']);
    });

    it('does not treat the dot of a list number as a sentence end', () => {
      expect(chunksOf('Pick one:\n1. Billing\n2. Support.\n3. Sales.', everywhere)).toEqual(['Pick one:', '1. Billing 2. Support.', '3. Sales.']);
    });
  });

  describe('markdown and whitespace', () => {
    it('strips emphasis, code marks, headings, bullets, quotes and rules, keeping the words', () => {
      const text = '# Your order\n\n**Good news**: it *shipped* with `FedEx`.\n\n- Tracking: `1Z999`\n* Arrives: Thursday\n  + Signed by: you\n> Note: keep the box.\n---\n```\ncode here\n```';
      expect(normaliseSpeakableText(text)).toBe('Your order Good news: it shipped with FedEx. Tracking: 1Z999 Arrives: Thursday Signed by: you Note: keep the box. code here');
    });

    it('keeps what only looks like markdown: # mid-line, hashtags, negative numbers, hyphens, underscores', () => {
      expect(normaliseSpeakableText('Press # to finish.\n#1 in sales, #support\n-5 degrees, well-known snake_case')).toBe('Press # to finish. #1 in sales, #support -5 degrees, well-known snake_case');
      expect(normaliseSpeakableText('Rate: 3 - 1 = 2\n-- not a rule')).toBe('Rate: 3 - 1 = 2 -- not a rule');
    });

    it('collapses whitespace, trims, and never emits an empty chunk', () => {
      expect(chunksOf('   \n\t  ')).toEqual([]);
      expect(chunksOf('')).toEqual([]);
      expect(chunksOf('**  **\n# \n- ')).toEqual([]);
      expect(chunksOf('  Hello   there,\n\n   how  are you?  ')).toEqual(['Hello there,', 'how are you?']);
    });
  });

  describe('streaming', () => {
    it('hands out a chunk as soon as the character after its boundary arrives', () => {
      const chunker = new SpeakableChunker();
      expect(chunker.push('Thanks for waiting,')).toEqual([]);
      expect(chunker.push(' ')).toEqual([]);
      expect(chunker.push('I')).toEqual(['Thanks for waiting,']);
      expect(chunker.push(' found it. It ships today')).toEqual([]);
      expect(chunker.push(' from the warehouse near you. An')).toEqual(['I found it. It ships today from the warehouse near you.']);
      expect(chunker.flush()).toEqual(['An']);
    });

    it('waits for what follows a line-start marker before deciding it', () => {
      const chunker = new SpeakableChunker({ minFirstChunkChars: 1 });
      expect(chunker.push('Done.\n#')).toEqual([]);
      expect(chunker.push('#')).toEqual([]);
      expect(chunker.push(' Next, steps')).toEqual(['Done.']);
      expect(chunker.flush()).toEqual(['Next, steps']);
    });

    it('starts afresh after flush: the next reply gets its own early first chunk', () => {
      const chunker = new SpeakableChunker();
      expect([...chunker.push('One moment please, checking.'), ...chunker.flush()]).toEqual(['One moment please,', 'checking.']);
      expect(chunker.flush()).toEqual([]);
      expect([...chunker.push('## Found it, your order shipped.'), ...chunker.flush()]).toEqual(['Found it, your order shipped.']);
    });

    it('ignores empty deltas', () => {
      expect(chunksOfDeltas(['', 'Hello there, ', '', 'friend.', ''])).toEqual(['Hello there,', 'friend.']);
    });
  });

  describe('the same chunks however the reply is split (property)', () => {
    const texts = [
      'Thanks for waiting, I found your order. It shipped on Monday from our warehouse. It should arrive by Thursday, weather permitting.',
      '## Options\nHere are your options:\n1. **Billing** questions\n2. `Support` requests\n- Talk to Mr. Smith or Dr. Jones at St. Louis, e.g. the Paris office.\n---\nThe price is 3.5 dollars, or 1,000 cents... really! Visit https://example.com/a.b?c=1 or mail a.b@example.com. Thanks.',
      'I was... thinking. Well… Maybe. 你好。 我们明天开门！ 好吗？ ok — sure – fine; yes: no',
      `See ${'y'.repeat(70)} and then a very long sentence without any full stop that goes on and on, with a clause here and there, until it passes the limit`,
    ];
    const optionSets: SpeakableChunkerOptions[] = [{}, { minFirstChunkChars: 3, minChunkChars: 10, maxChunkChars: 30 }];

    it.each(optionSets.map((options) => [JSON.stringify(options), options] as const))('splits at every position give the same chunks (options %s)', (_label, options) => {
      for (const text of texts) {
        const whole = chunksOf(text, options);
        expectWellFormed(whole, text);
        for (let at = 0; at <= text.length; at++) expect(chunksOfDeltas([text.slice(0, at), text.slice(at)], options)).toEqual(whole);
        expect(chunksOfDeltas([...text], options)).toEqual(whole);
      }
    });

    it('random splits of random replies give the same chunks, all well formed', () => {
      const random = seededRandom(20261122);
      const pieces = ['Hello', 'there', 'Mr.', 'Dr.', 'e.g.', 'etc.', '3.5', '1,000', '10:30', 'https://x.io/a.b', 'a@b.co', '...', '…', '.', ',', ';', ':', '!', '?', '—', '-', '–', '。', '？', '**', '*', '`', '#', '##', '\n', '\n- ', '\n1. ', '\n# ', '\n---\n', '> ', '"', ')', 'yes', 'No', 'and', 'then', 'we', 'Okay'];
      const separators = [' ', ' ', ' ', '', '  ', '\n'];
      for (let trial = 0; trial < 300; trial++) {
        const words: string[] = [];
        const count = 1 + Math.floor(random() * 60);
        for (let i = 0; i < count; i++) words.push(pieces[Math.floor(random() * pieces.length)]! + separators[Math.floor(random() * separators.length)]!);
        const text = words.join('');
        const options = optionSets[trial % optionSets.length];
        const whole = chunksOf(text, options);
        expectWellFormed(whole, text);
        for (let split = 0; split < 5; split++) expect(chunksOfDeltas(randomSplit(text, random, 1 + (split % 3) * 7), options)).toEqual(whole);
      }
    });
  });

  describe('bad input', () => {
    it('refuses inconsistent options with a clear error', () => {
      expect(() => new SpeakableChunker({ minChunkChars: 300, maxChunkChars: 250 })).toThrow(/minChunkChars \(300\) must not exceed maxChunkChars \(250\)/);
      expect(() => new SpeakableChunker({ minFirstChunkChars: 0 })).toThrow(/minFirstChunkChars must be a whole number >= 1, got 0/);
      expect(() => new SpeakableChunker({ maxChunkChars: Number.NaN })).toThrow(RangeError);
    });

    it('refuses a delta that is not a string, keeping what it already had', () => {
      const chunker = new SpeakableChunker();
      chunker.push('Hello there');
      expect(() => chunker.push(undefined as unknown as string)).toThrow(/expects a string delta, got undefined/);
      expect(() => chunker.push(null as unknown as string)).toThrow(/got null/);
      expect(chunker.flush()).toEqual(['Hello there']);
    });
  });
});
