import { FakeScheduler } from '@switchboard/testing';
import { FRAME_BYTES, InboundFrameSink, InboundLine } from './inbound-line';
import { MULAW_SILENCE } from '@switchboard/audio';

type Sent = { kind: 'media'; chunk: number; bytes: number[]; atMs: number } | { kind: 'dtmf'; digit: string; atMs: number };

function recordingLine(options: { idleSilence?: boolean } = {}) {
  const scheduler = new FakeScheduler(0);
  const sent: Sent[] = [];
  const speechEnds: number[] = [];
  const sink: InboundFrameSink = {
    // Copy: the payload is a view into the line's preallocated frame.
    sendMedia: (payload, tick) => sent.push({ kind: 'media', chunk: tick.index + 1, bytes: [...payload], atMs: scheduler.nowMs() }),
    sendDtmf: (digit) => sent.push({ kind: 'dtmf', digit, atMs: scheduler.nowMs() }),
    onSpeechEnded: (atMs) => speechEnds.push(atMs),
  };
  const line = new InboundLine(sink, { scheduler, ...options });
  return { scheduler, sent, speechEnds, line };
}

const media = (sent: Sent[]) => sent.filter((item): item is Extract<Sent, { kind: 'media' }> => item.kind === 'media');

describe('InboundLine', () => {
  it('sends audio in 160-byte frames every 20 ms, pads the last frame and adds trailing silence', async () => {
    const { scheduler, sent, speechEnds, line } = recordingLine();
    const audio = new Uint8Array(400).map((_, index) => index % 200); // 2.5 frames, never 0xff
    line.start(0);
    const done = line.enqueue(audio, { trailingSilenceMs: 40 });
    scheduler.runUntil(100);
    const timing = await done;

    const frames = media(sent);
    expect(frames.map((frame) => frame.atMs)).toEqual([20, 40, 60, 80, 100]);
    expect(frames.map((frame) => frame.chunk)).toEqual([1, 2, 3, 4, 5]);
    expect(frames.every((frame) => frame.bytes.length === FRAME_BYTES)).toBe(true);
    expect(frames[0]?.bytes).toEqual([...audio.subarray(0, 160)]);
    expect(frames[2]?.bytes.slice(0, 80)).toEqual([...audio.subarray(320, 400)]);
    expect(frames[2]?.bytes.slice(80).every((byte) => byte === MULAW_SILENCE)).toBe(true);
    expect(frames.slice(3).every((frame) => frame.bytes.every((byte) => byte === MULAW_SILENCE))).toBe(true);
    expect(timing).toEqual({ completed: true, startedAtMs: 20, speechEndedAtMs: 60, audibleEndedAtMs: 60, endedAtMs: 100 });
    expect(speechEnds).toEqual([60]);
    line.stop();
  });

  it('tells when the last audible frame went out, before the silence a recording may end with', async () => {
    const { scheduler, line } = recordingLine();
    const audio = new Uint8Array(4 * FRAME_BYTES).fill(MULAW_SILENCE);
    audio.fill(0x10, 0, FRAME_BYTES + 1); // speech into the second frame's first byte
    line.start(0);
    const done = line.enqueue(audio);
    scheduler.runUntil(80);
    expect(await done).toMatchObject({ startedAtMs: 20, audibleEndedAtMs: 40, speechEndedAtMs: 80 });
    const silent = line.enqueue(new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE));
    scheduler.runUntil(100);
    expect(await silent).toMatchObject({ audibleEndedAtMs: null, speechEndedAtMs: 100 });
    line.stop();
  });

  it('keeps the line alive with silence between utterances, like a real call', () => {
    const { scheduler, sent, line } = recordingLine();
    line.start(0);
    scheduler.runUntil(60);
    expect(media(sent)).toHaveLength(3);
    expect(media(sent).every((frame) => frame.bytes.every((byte) => byte === MULAW_SILENCE))).toBe(true);
    line.stop();
  });

  it('sends nothing between utterances with idleSilence: false', () => {
    const { scheduler, sent, line } = recordingLine({ idleSilence: false });
    line.start(0);
    scheduler.runUntil(100);
    expect(sent).toEqual([]);
    line.stop();
  });

  it('sends DTMF just before the frame it falls in, and stays open for a late press', async () => {
    const { scheduler, sent, line } = recordingLine({ idleSilence: false });
    line.start(0);
    const done = line.enqueue(new Uint8Array(160), {
      dtmf: [
        { digit: '1', atMs: 0 },
        { digit: '#', atMs: 45 },
        { digit: '9', atMs: 45 },
      ],
    });
    scheduler.runUntil(200);
    const timing = await done;
    expect(sent.map((item) => (item.kind === 'dtmf' ? item.digit : `media@${item.atMs}`))).toEqual([
      '1',
      'media@20',
      'media@40',
      '#',
      '9',
      'media@60',
    ]);
    expect(timing.speechEndedAtMs).toBe(20);
    expect(timing.endedAtMs).toBe(60);
    line.stop();
  });

  it('plays queued utterances in order and settles unsent ones with completed: false on stop', async () => {
    const { scheduler, line } = recordingLine();
    line.start(0);
    const first = line.enqueue(new Uint8Array(320).fill(1));
    const second = line.enqueue(new Uint8Array(320).fill(2), { trailingSilenceMs: 1000 });
    scheduler.runUntil(60);
    line.stop();
    await expect(first).resolves.toMatchObject({ completed: true, endedAtMs: 40 });
    await expect(second).resolves.toMatchObject({ completed: false, startedAtMs: 60, speechEndedAtMs: null });
    await expect(line.enqueue(new Uint8Array(160))).resolves.toMatchObject({ completed: false });
  });

  it('rejects invalid DTMF digits and negative times', () => {
    const { line } = recordingLine();
    expect(() => line.enqueue(new Uint8Array(0), { dtmf: [{ digit: 'x', atMs: 0 }] })).toThrow(RangeError);
    expect(() => line.enqueue(new Uint8Array(0), { dtmf: [{ digit: '1', atMs: -1 }] })).toThrow(RangeError);
    expect(() => line.enqueue(new Uint8Array(0), { trailingSilenceMs: -5 })).toThrow(RangeError);
  });
});
