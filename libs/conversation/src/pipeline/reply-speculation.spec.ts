import type { AssistantReply } from './assistant-reply';
import { ConversationHistory } from './conversation-history';
import { ReplySpeculation, SPECULATE_AFTER_SILENCE_MS, type SpeculationHost } from './reply-speculation';
import { InMemoryConversationRecorder } from '../records/conversation-records';

/** A held reply as far as the speculation sees it: generated once, cancellable. */
function fakeReply(id: string): AssistantReply & { generated: number } {
  const reply = {
    id,
    cancelled: false,
    generated: 0,
    generate: () => {
      reply.generated += 1;
      return new Promise(() => undefined);
    },
    cancel: () => {
      reply.cancelled = true;
    },
  };
  return reply as unknown as AssistantReply & { generated: number };
}

function setUp(options: { mayStart?: boolean } = {}) {
  const recorder = new InMemoryConversationRecorder();
  const started: Array<{ text: string; reply: ReturnType<typeof fakeReply> }> = [];
  let heardMs = 0;
  const host: SpeculationHost = {
    mayStart: () => options.mayStart ?? true,
    heardMs: () => heardMs,
    startHeld: (text) => {
      const reply = fakeReply(`r${started.length + 1}`);
      started.push({ text, reply });
      return { reply, history: new ConversationHistory('system'), text };
    },
    recorder,
  };
  const speculation = new ReplySpeculation(host);
  /** VAD frames of 32 ms up to `untilMs`, speaking or silent. */
  const frames = (fromMs: number, untilMs: number, inSpeech: boolean) => {
    for (let at = fromMs; at < untilMs; at += 32) {
      heardMs = at + 32;
      speculation.onFrame(inSpeech, at);
    }
  };
  return { speculation, started, frames, recorder };
}

describe('ReplySpeculation', () => {
  it('starts one held reply once a stable partial has a pause of SPECULATE_AFTER_SILENCE_MS behind it', () => {
    const { speculation, started, frames } = setUp();
    speculation.speechStarted();
    frames(0, 960, true);
    speculation.onStablePartial('what time do you open');
    frames(960, 960 + SPECULATE_AFTER_SILENCE_MS - 40, false);
    expect(started).toHaveLength(0);
    frames(960 + SPECULATE_AFTER_SILENCE_MS - 40, 960 + 400, false);
    expect(started.map((s) => s.text)).toEqual(['what time do you open']);
    expect(started[0]!.reply.generated).toBe(1);
  });

  it('waits for a partial, restarts the pause when the caller speaks again, and never starts where the host says no', () => {
    const { speculation, started, frames } = setUp();
    speculation.speechStarted();
    frames(0, 400, false);
    expect(started).toHaveLength(0);
    speculation.onStablePartial('hello');
    // The pause before the partial counts: it is already long enough.
    expect(started).toHaveLength(1);

    const refused = setUp({ mayStart: false });
    refused.speculation.onStablePartial('hello');
    refused.frames(0, 800, false);
    expect(refused.started).toHaveLength(0);

    const resumed = setUp();
    resumed.speculation.onStablePartial('hello');
    resumed.frames(0, 96, false);
    resumed.frames(96, 192, true);
    resumed.frames(192, 192 + 128, false);
    expect(resumed.started).toHaveLength(0);
    resumed.frames(320, 400, false);
    expect(resumed.started).toHaveLength(1);
  });

  it('hands over the reply when the final transcript says the same words, whatever the case and punctuation', () => {
    const { speculation, started, frames, recorder } = setUp();
    speculation.onStablePartial('What time do you open');
    frames(0, 320, false);
    const taken = speculation.take('what time, do you open?');
    expect(taken?.reply).toBe(started[0]!.reply);
    expect(taken?.reply.cancelled).toBe(false);
    expect(speculation.take('what time, do you open?')).toBeUndefined();
    expect(recorder.events.filter((e) => e.type === 'speculation_discarded')).toEqual([]);
  });

  it('cancels the reply and records it when the final transcript differs; a new turn forgets the old partial', () => {
    const { speculation, started, frames, recorder } = setUp();
    speculation.onStablePartial('what time do you open');
    frames(0, 320, false);
    expect(speculation.take('what time do you close')).toBeUndefined();
    expect(started[0]!.reply.cancelled).toBe(true);
    expect(recorder.events.filter((e) => e.type === 'speculation_discarded').map((e) => e.payload)).toEqual([{ replyId: 'r1' }]);

    speculation.speechStarted();
    frames(320, 960, false);
    expect(started).toHaveLength(1);
  });

  it('cancel() stops a pending speculation and lets the next one start', () => {
    const { speculation, started, frames } = setUp();
    speculation.onStablePartial('hello');
    frames(0, 320, false);
    speculation.cancel();
    expect(started[0]!.reply.cancelled).toBe(true);
    speculation.onStablePartial('hello again');
    expect(started.map((s) => s.text)).toEqual(['hello', 'hello again']);
  });
});
