import { MULAW_SILENCE } from '@switchboard/audio';
import { PlaybackBuffer } from './playback-buffer';

/** n bytes of a recognisable non-silence value. */
const audio = (bytes: number, value = 0x10): Uint8Array => new Uint8Array(bytes).fill(value);

describe('PlaybackBuffer (times in ms from a fake clock starting at 1000)', () => {
  const ORIGIN_MS = 1000;

  it('echoes a mark at once when nothing is queued', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    expect(buffer.enqueueMark('m0', ORIGIN_MS + 5)).toEqual([{ name: 'm0', reason: 'played' }]);
    expect(buffer.pendingMarks).toBe(0);
  });

  it('echoes a mark only when the audio queued before it has played (8 bytes per ms)', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    buffer.enqueueAudio(audio(160), ORIGIN_MS); // 20 ms
    buffer.enqueueAudio(audio(160), ORIGIN_MS); // 40 ms in all
    expect(buffer.enqueueMark('after-40ms', ORIGIN_MS)).toEqual([]);
    expect(buffer.nextMarkDueMs()).toBe(ORIGIN_MS + 40);
    expect(buffer.advance(ORIGIN_MS + 39.875)).toEqual([]); // one byte still to play
    expect(buffer.pendingBytes).toBe(1);
    expect(buffer.advance(ORIGIN_MS + 40)).toEqual([{ name: 'after-40ms', reason: 'played' }]);
    expect(buffer.nextMarkDueMs()).toBeNull();
    expect(buffer.playedBytes).toBe(320);
  });

  it('echoes several marks in order, each at its own position', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    buffer.enqueueAudio(audio(80), ORIGIN_MS);
    buffer.enqueueMark('a', ORIGIN_MS);
    buffer.enqueueMark('b', ORIGIN_MS);
    buffer.enqueueAudio(audio(80), ORIGIN_MS);
    buffer.enqueueMark('c', ORIGIN_MS);
    expect(buffer.nextMarkDueMs()).toBe(ORIGIN_MS + 10);
    expect(buffer.advance(ORIGIN_MS + 10).map((echo) => echo.name)).toEqual(['a', 'b']);
    expect(buffer.nextMarkDueMs()).toBe(ORIGIN_MS + 20);
    expect(buffer.advance(ORIGIN_MS + 25).map((echo) => echo.name)).toEqual(['c']);
  });

  it('starts audio that arrives after an underrun at the arrival time, not back-dated', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    buffer.enqueueAudio(audio(80, 0x20), ORIGIN_MS + 100); // arrives after 100 ms of silence
    buffer.enqueueMark('end', ORIGIN_MS + 100);
    expect(buffer.nextMarkDueMs()).toBe(ORIGIN_MS + 110);
    expect(buffer.advance(ORIGIN_MS + 120)).toEqual([{ name: 'end', reason: 'played' }]);
    const played = buffer.playedAudio();
    expect(played.length).toBe(960); // 120 ms on the timeline
    expect(played.subarray(0, 800).every((byte) => byte === MULAW_SILENCE)).toBe(true);
    expect(played.subarray(800, 880).every((byte) => byte === 0x20)).toBe(true);
    expect(played.subarray(880).every((byte) => byte === MULAW_SILENCE)).toBe(true);
  });

  it('clear drops queued audio and echoes every outstanding mark at once, after those already played', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    buffer.enqueueAudio(audio(80, 0x30), ORIGIN_MS); // plays 0-10 ms
    buffer.enqueueMark('played-one', ORIGIN_MS);
    buffer.enqueueAudio(audio(800, 0x40), ORIGIN_MS); // would play 10-110 ms
    buffer.enqueueMark('cut-1', ORIGIN_MS);
    buffer.enqueueAudio(audio(160, 0x50), ORIGIN_MS);
    buffer.enqueueMark('cut-2', ORIGIN_MS);

    expect(buffer.clear(ORIGIN_MS + 30)).toEqual([
      { name: 'played-one', reason: 'played' },
      { name: 'cut-1', reason: 'cleared' },
      { name: 'cut-2', reason: 'cleared' },
    ]);
    expect(buffer.pendingBytes).toBe(0);
    expect(buffer.pendingMarks).toBe(0);
    expect(buffer.nextMarkDueMs()).toBeNull();
    expect(buffer.clearedBytes).toBe(800 - 160 + 160); // 20 ms of the 100 ms segment had played
    // After the clear the line is silent again, and a new mark comes straight back.
    expect(buffer.enqueueMark('fresh', ORIGIN_MS + 31)).toEqual([{ name: 'fresh', reason: 'played' }]);
    buffer.advance(ORIGIN_MS + 50);
    const played = buffer.playedAudio();
    expect(played.subarray(0, 80).every((byte) => byte === 0x30)).toBe(true);
    expect(played.subarray(80, 240).every((byte) => byte === 0x40)).toBe(true);
    expect(played.subarray(240).every((byte) => byte === MULAW_SILENCE)).toBe(true);
    expect(played.includes(0x50)).toBe(false);
  });

  it('clear with nothing queued echoes nothing', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    expect(buffer.clear(ORIGIN_MS + 5)).toEqual([]);
  });

  it('a wake-up at exactly nextMarkDueMs() releases the mark despite fractional clock values', () => {
    const origin = 1234.567891;
    const buffer = new PlaybackBuffer(origin);
    buffer.enqueueAudio(audio(1), origin + 0.3);
    buffer.enqueueAudio(audio(159), origin + 0.7);
    buffer.enqueueMark('m', origin + 0.7);
    const due = buffer.nextMarkDueMs();
    expect(due).not.toBeNull();
    expect(buffer.advance(due ?? 0)).toEqual([{ name: 'm', reason: 'played' }]);
  });

  it('knows when the last audible audio will have played: silence the agent sends does not count, a clear cuts it short', () => {
    const buffer = new PlaybackBuffer(ORIGIN_MS);
    expect(buffer.lastAudibleArrivalMs).toBeNull();
    buffer.enqueueAudio(audio(80), ORIGIN_MS + 20); // the buffer ran dry for 20 ms: this plays from +20 to +30
    buffer.enqueueAudio(new Uint8Array(160).fill(MULAW_SILENCE), ORIGIN_MS + 21);
    expect(buffer.audibleUntilMs).toBe(ORIGIN_MS + 30);
    expect(buffer.lastAudibleArrivalMs).toBe(ORIGIN_MS + 20);
    // Audible bytes then silence in one payload: it ends at its last audible byte.
    const mixed = new Uint8Array(160).fill(MULAW_SILENCE);
    mixed.fill(0x10, 0, 40);
    buffer.enqueueAudio(mixed, ORIGIN_MS + 22);
    expect(buffer.audibleUntilMs).toBe(ORIGIN_MS + 50 + 5);
    buffer.clear(ORIGIN_MS + 40);
    expect(buffer.audibleUntilMs).toBe(ORIGIN_MS + 40);
  });
});
