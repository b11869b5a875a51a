import { CallerAudio } from './caller-audio';

const ramp = (from: number, length: number) => Int16Array.from({ length }, (_, i) => from + i);

describe('CallerAudio (the caller audio of a call, buffered once)', () => {
  it('reads back any range it still holds, across the ring boundary, clamped to what it keeps', () => {
    // 1 s at 100 Hz: 100 samples kept.
    const audio = new CallerAudio({ sampleRate: 100, keepSeconds: 1 });
    for (let frame = 0; frame < 7; frame++) audio.append(ramp(frame * 20, 20), frame * 20);
    expect(audio.totalSamples).toBe(140);
    expect(audio.copy(90, 110)).toEqual(ramp(90, 20));
    // Samples 0-39 were overwritten: a read from 0 starts at the oldest kept.
    expect(audio.copy(0, 45)).toEqual(ramp(40, 5));
    expect(audio.since(1000)).toEqual(ramp(100, 40));
    expect(audio.copy(140, 200)).toEqual(new Int16Array(0));
  });

  it('keeps only the newest samples of an append larger than the ring', () => {
    const audio = new CallerAudio({ sampleRate: 100, keepSeconds: 1 });
    audio.append(ramp(0, 30));
    audio.append(ramp(30, 250));
    expect(audio.totalSamples).toBe(280);
    expect(audio.copy(0, 280)).toEqual(ramp(180, 100));
  });

  it('maps a stream position to when its frame arrived, for as long as the audio is kept', () => {
    const audio = new CallerAudio({ sampleRate: 8000, keepSeconds: 1 });
    for (let frame = 0; frame < 100; frame++) audio.append(new Int16Array(160), 1000 + frame * 20.5);
    // 1990 ms into the stream is in frame 99 (ends at 2000 ms); 1000 ms is frame 49's end.
    expect(audio.arrivalOf(1990)).toBe(1000 + 99 * 20.5);
    expect(audio.arrivalOf(1000)).toBe(1000 + 49 * 20.5);
    // Frames older than the kept second are forgotten; positions not here yet have no arrival.
    expect(audio.arrivalOf(500)).toBeUndefined();
    expect(audio.arrivalOf(2100)).toBeUndefined();
  });

  it('keeps arrival times without samples when asked to (an agent whose model has the audio)', () => {
    const audio = new CallerAudio({ sampleRate: 8000, keepSeconds: 10, keepSamples: false });
    audio.append(new Int16Array(160), 5);
    audio.append(new Int16Array(160), 25);
    expect(audio.arrivalOf(30)).toBe(25);
    expect(audio.since(0)).toEqual(new Int16Array(0));
  });
});
