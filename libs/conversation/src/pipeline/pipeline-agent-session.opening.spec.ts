/**
 * The first message when the caller speaks first (libs/testing/src/conversation/pipeline-call.ts):
 * it is not said over them and not lost; it waits until they stop, is the first thing they hear,
 * and the answer to what they said follows it. Never played, it is still in the transcript.
 */
import { assistant, system, usePipelineCalls, user } from '../../../testing/src/conversation/pipeline-call';
import { EngineError } from '@switchboard/inference';
import { gate, settle } from '@switchboard/testing';

const GREETING = 'Hello, thanks for calling Acme.';
const QUESTION = 'What time do you open?';
const ANSWER = 'We open at nine.';

describe('PipelineAgentSession: the first message when the caller speaks first', () => {
  const startCall = usePipelineCalls();

  it('waits while the caller talks during start-up, then is heard before the answer, which knows it was said', async () => {
    const ready = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    c.asr.willHear(QUESTION);
    c.llm.willAnswer([ANSWER]);
    await c.talk(400);
    ready.open();
    await c.talk(200);
    // Not said over the caller.
    expect(c.output.playedSamples).toBe(0);
    // Held audio is listened to before the greeting is begun: it is not even synthesised yet.
    expect(c.tts.texts).toEqual([]);
    expect(c.eventsOf('opening_line_deferred')).toEqual([{ source: 'first_message', reason: 'caller_speaking', replyId: null }]);

    await c.pause(700);
    // They stopped: the greeting plays first, and the answer waits until it has been heard.
    expect(c.tts.texts).toEqual([GREETING]);
    expect(c.output.playedSamples).toBeGreaterThan(0);
    expect(c.llm.requests).toHaveLength(0);

    await c.echoAll();
    expect(c.messagesOf(0)).toEqual([system, assistant(GREETING), user(QUESTION)]);
    expect(c.tts.texts).toEqual([GREETING, ANSWER]);
    await c.echoAll();
    expect(c.turns).toEqual([
      { role: 'user', source: 'speech', text: QUESTION, heardText: null, interrupted: false },
      { role: 'assistant', source: 'first_message', text: GREETING, heardText: null, interrupted: false },
      { role: 'assistant', source: 'speech', text: ANSWER, heardText: null, interrupted: false },
    ]);
    expect(c.eventsOf('reply_discarded')).toEqual([]);
  });

  it('comes before the answer to a whole turn the caller took while the engines got ready', async () => {
    const ready = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    c.asr.willHear(QUESTION);
    c.llm.willAnswer([ANSWER]);
    await c.talk(600);
    await c.pause(700);
    ready.open();
    await c.pause(100);
    expect(c.tts.texts).toEqual([GREETING]);
    await c.echoAll();
    await c.echoAll();
    expect(c.turns.map(({ role, source, text }) => [role, source, text])).toEqual([
      ['user', 'speech', QUESTION],
      ['assistant', 'first_message', GREETING],
      ['assistant', 'speech', ANSWER],
    ]);
  });

  it('is said at once after held audio in which the caller did not speak', async () => {
    const ready = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    await c.pause(400);
    ready.open();
    await settle();
    expect(c.tts.texts).toEqual([GREETING]);
    expect(c.output.playedSamples).toBeGreaterThan(0);
    expect(c.eventsOf('opening_line_deferred')).toEqual([]);
  });

  it('is withdrawn, not discarded, when the caller starts talking before its audio went out, and said once they stop', async () => {
    const ready = gate();
    const slowVoice = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    // The voice is slow: the caller starts talking while the greeting is being synthesised.
    c.tts.stallUntil = slowVoice.opened;
    ready.open();
    await settle();
    expect(c.tts.texts).toEqual([GREETING]);
    expect(c.output.playedSamples).toBe(0);
    c.asr.willHear(QUESTION);
    c.llm.willAnswer([ANSWER]);
    await c.talk(600);
    slowVoice.open();
    await settle();
    expect(c.output.playedSamples).toBe(0);
    expect(c.eventsOf('opening_line_deferred')).toEqual([{ source: 'first_message', reason: 'caller_speaking', replyId: 'r1' }]);

    c.tts.stallUntil = undefined;
    await c.pause(700);
    await c.echoAll();
    await c.echoAll();
    expect(c.turns.map(({ role, source, text }) => [role, source, text])).toEqual([
      ['user', 'speech', QUESTION],
      ['assistant', 'first_message', GREETING],
      ['assistant', 'speech', ANSWER],
    ]);
  });

  it('is heard before the answer to keys pressed while the engines got ready, instead of being replaced by it', async () => {
    const ready = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    c.llm.willAnswer(['Thank you.']);
    await c.pressKeys('1', '#');
    ready.open();
    await settle();
    expect(c.output.playedSamples).toBeGreaterThan(0);
    expect(c.llm.requests).toHaveLength(0);
    await c.echoAll();
    expect(c.messagesOf(0)).toEqual([system, assistant(GREETING), user('The caller pressed 1 #')]);
    await c.echoAll();
    expect(c.turns.map(({ role, source }) => [role, source])).toEqual([
      ['user', 'dtmf'],
      ['assistant', 'first_message'],
      ['assistant', 'speech'],
    ]);
  });

  it('is a transcript turn heard by nobody, saying why, when the call ends before the caller stopped talking', async () => {
    const ready = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    await c.talk(400);
    ready.open();
    await c.talk(200);
    c.session.close('caller_hangup');
    await settle();
    expect(c.turns).toEqual([{ role: 'assistant', source: 'first_message', text: GREETING, heardText: '', interrupted: true }]);
    expect(c.eventsOf('assistant_turn_cut')).toEqual([{ index: 0, why: 'call_ended' }]);
    expect(c.output.playedSamples).toBe(0);
  });

  it('a greeting the voice fails on holds nothing up: the apology follows', async () => {
    const ready = gate();
    const c = await startCall({ config: { firstMessage: GREETING }, enginesReady: ready.opened });
    c.tts.failOn(GREETING, new EngineError('fake-tts', 'inference_failed', 'voice down', false));
    ready.open();
    await settle();
    await c.echoAll();
    expect(c.eventsOf('tts_error')).toHaveLength(1);
    expect(c.tts.texts).toHaveLength(2);
    expect(c.tts.texts[1]).not.toBe(GREETING);
  });

  it('once playing, is cut by barge-in like any reply, keeping what was heard', async () => {
    const c = await startCall({ config: { firstMessage: GREETING } });
    expect(c.output.playedSamples).toBeGreaterThan(0);
    await c.talk(600);
    expect(c.eventsOf('opening_line_deferred')).toEqual([]);
    expect(c.eventsOf('barge_in')).toHaveLength(1);
    expect(c.turns).toEqual([{ role: 'assistant', source: 'first_message', text: GREETING, heardText: '', interrupted: true }]);
  });
});
