import { PlaybackTracker, wordPrefix } from './playback-tracker';

/**
 * 1 kHz audio and a 250 ms mark interval: a progress mark every 250 samples, so mark positions are
 * easy to read off. Marks are echoed by name, as the call edge does.
 */
function tracker(): { tracker: PlaybackTracker; marks: string[] } {
  const marks: string[] = [];
  return { tracker: new PlaybackTracker({ mark: (name) => marks.push(name) }, 1000, 'r1'), marks };
}

/** Sends `text` as one segment of `samples` audio, in 50-sample pieces, and ends it. */
function speak(playback: PlaybackTracker, text: string, samples: number, options: { aside?: boolean } = {}): void {
  playback.beginSegment(text, options);
  for (let sent = 0; sent < samples; sent += 50) playback.audioSent(Math.min(50, samples - sent));
  playback.endSegment();
}

describe('PlaybackTracker', () => {
  it('places a progress mark every interval and a final one per segment, named with the reply prefix', () => {
    const { tracker: playback, marks } = tracker();
    speak(playback, 'one two three four', 600);
    // 250 and 500 samples in, then the end of the segment.
    expect(marks).toEqual(['r1:1', 'r1:2', 'r1:3']);
    expect(playback.sentSeconds).toBeCloseTo(0.6);
    expect(playback.playing).toBe(true);
  });

  it('sendAudio cuts large chunks where progress marks fall, so marks come every interval however the audio is chunked', () => {
    const sink: string[] = [];
    const playback = new PlaybackTracker({ mark: (name) => sink.push(`mark:${name}`) }, 1000, 'r1');
    playback.beginSegment('a long answer');
    for (const size of [1, 161, 1234, 4801]) playback.sendAudio(new Uint8Array(size), (piece) => sink.push(`play:${piece.length}`));
    playback.endSegment();
    // 6197 samples: marks at 250, 500, ... 6000, then the final one; not one mark per chunk.
    expect(sink.slice(0, 6)).toEqual(['play:1', 'play:161', 'play:88', 'mark:r1:1', 'play:250', 'mark:r1:2']);
    expect(sink.filter((entry) => entry.startsWith('mark:'))).toHaveLength(25);
    expect(sink.filter((entry) => entry.startsWith('play:')).reduce((sum, entry) => sum + Number(entry.slice(5)), 0)).toBe(6197);
    expect(playback.sentSeconds).toBeCloseTo(6.197);
  });

  it('counts a segment as heard once its final mark is echoed as played', () => {
    const { tracker: playback, marks } = tracker();
    speak(playback, 'Our store opens at nine.', 100);
    speak(playback, 'We close at five.', 100);
    expect(marks).toEqual(['r1:1', 'r1:2']);
    expect(playback.heardText).toBe('');

    expect(playback.onMarkEchoed('r1:1', false)).toBe(true);
    expect(playback.heardText).toBe('Our store opens at nine.');
    expect(playback.onMarkEchoed('r1:2', false)).toBe(true);
    expect(playback.heardText).toBe('Our store opens at nine. We close at five.');
    expect(playback.heardSeconds).toBeCloseTo(0.2);
    expect(playback.playing).toBe(false);
  });

  it('keeps the share of a segment its last echoed progress mark covers, cut at a word boundary', () => {
    const { tracker: playback, marks } = tracker();
    // 18 characters over 1000 samples: the 250-sample mark covers 4.5 characters, "one " and a bit.
    speak(playback, 'one two three four', 1000);
    expect(marks).toEqual(['r1:1', 'r1:2', 'r1:3', 'r1:4', 'r1:5']);
    playback.onMarkEchoed('r1:1', false);
    expect(playback.heardText).toBe('one');
    // 500 of 1000 samples: 9 characters, "one two t" -> "one two".
    playback.onMarkEchoed('r1:2', false);
    expect(playback.heardText).toBe('one two');
    expect(playback.heardSeconds).toBeCloseTo(0.5);
  });

  it('measures an unfinished segment against what was sent of it so far', () => {
    const { tracker: playback, marks } = tracker();
    playback.beginSegment('alpha beta gamma delta');
    playback.audioSent(250);
    playback.audioSent(250);
    expect(marks).toEqual(['r1:1', 'r1:2']);
    playback.onMarkEchoed('r1:2', false);
    // Everything sent so far was heard; the segment is still open, so its text counts whole.
    expect(playback.heardText).toBe('alpha beta gamma delta');
    expect(playback.segmentOpen).toBe(true);
  });

  it('does not count marks echoed as cleared (the buffer was thrown away)', () => {
    const { tracker: playback } = tracker();
    speak(playback, 'Our store opens at nine.', 100);
    speak(playback, 'We close at five.', 100);
    playback.onMarkEchoed('r1:1', false);
    playback.onMarkEchoed('r1:2', true);
    expect(playback.heardText).toBe('Our store opens at nine.');
    expect(playback.heardSeconds).toBeCloseTo(0.1);
    // Cleared marks still come back, so nothing is left playing.
    expect(playback.playing).toBe(false);
  });

  it('ignores marks of other replies', () => {
    const { tracker: playback } = tracker();
    speak(playback, 'Hello.', 100);
    expect(playback.onMarkEchoed('r2:1', false)).toBe(false);
    expect(playback.onMarkEchoed('r1:1', false)).toBe(true);
    // A second echo of the same mark is not one of its pending marks any more.
    expect(playback.onMarkEchoed('r1:1', false)).toBe(false);
  });

  it('leaves asides out of heardTextFrom unless asked, but not out of heardText', () => {
    const { tracker: playback } = tracker();
    speak(playback, 'Let me check.', 100);
    speak(playback, 'One moment please.', 100, { aside: true });
    speak(playback, 'Your order has shipped.', 100);
    for (const name of ['r1:1', 'r1:2', 'r1:3']) playback.onMarkEchoed(name, false);

    expect(playback.heardTextFrom(0)).toBe('Let me check. Your order has shipped.');
    expect(playback.heardTextFrom(1)).toBe('Your order has shipped.');
    expect(playback.heardTextFrom(0, { includeAsides: true })).toBe('Let me check. One moment please. Your order has shipped.');
    expect(playback.heardText).toBe('Let me check. One moment please. Your order has shipped.');
    expect(playback.sentText).toBe('Let me check. One moment please. Your order has shipped.');
    expect(playback.sentTextFrom(0)).toBe('Let me check. Your order has shipped.');
    expect(playback.segmentCount).toBe(3);
  });

  it('stops at an aside the caller has not finished hearing: what follows it was not heard either', () => {
    const { tracker: playback } = tracker();
    speak(playback, 'Let me check.', 100);
    speak(playback, 'One moment please.', 100, { aside: true });
    speak(playback, 'Your order has shipped.', 100);
    playback.onMarkEchoed('r1:1', false);
    expect(playback.heardTextFrom(0)).toBe('Let me check.');
  });

  it('resolves whenDrained once every mark has come back and no segment is open', async () => {
    const { tracker: playback } = tracker();
    await expect(playback.whenDrained()).resolves.toBeUndefined();

    speak(playback, 'First.', 100);
    playback.beginSegment('Second.');
    playback.audioSent(100);
    let drained = false;
    void playback.whenDrained().then(() => (drained = true));

    playback.onMarkEchoed('r1:1', false);
    await Promise.resolve();
    // The second segment is still open: more audio may follow.
    expect(drained).toBe(false);

    playback.endSegment();
    playback.onMarkEchoed('r1:2', true);
    await Promise.resolve();
    expect(drained).toBe(true);
  });

  it('releases whenDrained waiters on abandon (barge-in or hang-up) and stops playing', async () => {
    const { tracker: playback } = tracker();
    speak(playback, 'Never echoed.', 100);
    const drained = playback.whenDrained();
    playback.abandon();
    await expect(drained).resolves.toBeUndefined();
    expect(playback.playing).toBe(false);
    expect(playback.onMarkEchoed('r1:1', false)).toBe(false);
  });

  it('tells first-echo listeners once, including ones added after the first echo', () => {
    const { tracker: playback } = tracker();
    const calls: string[] = [];
    playback.onFirstEcho(() => calls.push('early'));
    speak(playback, 'One.', 100);
    speak(playback, 'Two.', 100);
    // A cleared echo is not audio the caller heard.
    playback.onMarkEchoed('r1:1', true);
    expect(calls).toEqual([]);
    playback.onMarkEchoed('r1:2', false);
    playback.onFirstEcho(() => calls.push('late'));
    expect(calls).toEqual(['early', 'late']);
  });

  it('refuses audio outside a segment', () => {
    const { tracker: playback } = tracker();
    expect(() => playback.audioSent(10)).toThrow(/no open segment/);
    speak(playback, 'Done.', 100);
    expect(() => playback.endSegment()).toThrow(/no open segment/);
  });
});

describe('wordPrefix', () => {
  it('keeps whole words only', () => {
    expect(wordPrefix('one two three', 0.5)).toBe('one');
    expect(wordPrefix('one two three', 0.62)).toBe('one two');
  });

  it('keeps a word when the cut falls exactly at its end', () => {
    // 0.55 of 13 characters cuts at 7: "one two", and the next character is the space.
    expect(wordPrefix('one two three', 0.55)).toBe('one two');
  });

  it('gives nothing when the cut is inside the first word, at zero or below', () => {
    expect(wordPrefix('wonderful day', 0.3)).toBe('');
    expect(wordPrefix('one two', 0)).toBe('');
    expect(wordPrefix('one two', -1)).toBe('');
    expect(wordPrefix('', 0.5)).toBe('');
  });

  it('gives everything at or past the end', () => {
    expect(wordPrefix('one two', 1)).toBe('one two');
    expect(wordPrefix('one two', 1.5)).toBe('one two');
    expect(wordPrefix('one two', 0.9999)).toBe('one');
  });

  it('does not leave trailing whitespace when words are separated by several spaces', () => {
    expect(wordPrefix('one   two three', 0.4)).toBe('one');
  });
});
