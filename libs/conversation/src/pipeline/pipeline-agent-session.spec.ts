/**
 * A whole pipeline call on scripted engines (libs/testing/src/conversation/pipeline-call.ts): the first message, the
 * caller's turns, barge-in, keypad input, speculative replies, start-up and closing.
 */
import { assistant, DEFAULTS, system, usePipelineCalls, user, type CallUnderTest } from '../../../testing/src/conversation/pipeline-call';
import { gate, settle } from '@switchboard/testing';

describe('PipelineAgentSession', () => {
  const startCall = usePipelineCalls();

  describe('first message', () => {
    it('speaks the rendered first message and records it as a first_message turn once heard', async () => {
      const c = await startCall({ config: { firstMessage: 'Hello {{caller.number}}, thanks for calling Acme.' } });
      expect(c.tts.texts).toEqual(['Hello +15550001111, thanks for calling Acme.']);
      expect(c.output.playedSamples).toBeGreaterThan(0);
      expect(c.output.marks).toEqual(['r1:1']);
      // Not recorded until the call says it was played.
      expect(c.turns).toEqual([]);

      await c.echoAll();
      expect(c.turns).toEqual([{ role: 'assistant', source: 'first_message', text: 'Hello +15550001111, thanks for calling Acme.', heardText: null, interrupted: false }]);
      // A scripted line has no latency waterfall.
      expect(c.recorder.latencies).toEqual([]);
    });

    it('puts the first message in the history the model sees, once', async () => {
      const c = await startCall({ config: { firstMessage: 'Hello, thanks for calling Acme.' } });
      await c.echoAll();
      c.llm.willAnswer(['We open at nine.']);
      await c.callerSays('What time do you open?');
      expect(c.messagesOf(0)).toEqual([system, assistant('Hello, thanks for calling Acme.'), user('What time do you open?')]);
    });
  });

  describe('a caller turn', () => {
    it('goes from speech through ASR, the model and TTS to the call, and is recorded with its latency once heard', async () => {
      const c = await startCall();
      c.llm.willAnswer(['We open at nine ', 'and close at five.']);
      await c.callerSays('What are your opening hours?');

      expect(c.asr.sessions).toHaveLength(1);
      expect(c.asr.sessions[0]!.pushedSamples).toBeGreaterThan(0);
      expect(c.asr.sessions[0]!.finished).toBe(true);
      expect(c.llm.requests).toHaveLength(1);
      expect(c.llm.requests[0]).toMatchObject({ callId: 'call-1', tools: undefined });
      expect(c.messagesOf(0)).toEqual([system, user('What are your opening hours?')]);
      expect(c.tts.texts).toEqual(['We open at nine and close at five.']);
      expect(c.output.playedSamples).toBeGreaterThan(0);
      expect(c.turns).toEqual([{ role: 'user', source: 'speech', text: 'What are your opening hours?', heardText: null, interrupted: false }]);
      expect(c.recorder.latencies).toEqual([]);

      await c.echoAll();
      expect(c.turns[1]).toEqual({ role: 'assistant', source: 'speech', text: 'We open at nine and close at five.', heardText: null, interrupted: false });
      expect(c.recorder.latencies).toHaveLength(1);
      const latency = c.recorder.latencies[0]!;
      expect(latency.turnIndex).toBe(1);
      const waterfall = [
        latency.endOfSpeechMs,
        // The frame that completed the silence arrives before the server acts on it.
        latency.endOfTurnFrameMs,
        latency.endOfTurnMs,
        latency.asrFinalMs,
        latency.llmFirstTokenMs,
        latency.ttsFirstByteMs,
        latency.firstFrameSentMs,
        latency.firstMarkEchoedMs,
      ];
      for (const step of waterfall) expect(typeof step).toBe('number');
      // Each step happens after the one before it on the call clock.
      const numbers = waterfall as number[];
      for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeGreaterThanOrEqual(numbers[i - 1]!);
      const [userTurn] = c.recorder.turns;
      expect(userTurn!.endMs).toBeGreaterThan(userTurn!.startMs);
      expect(latency.interruptedAtMs).toBeNull();
    });

    it('copies what it keeps of a frame: the edge reuses (and here zeroes) its buffer after each push', async () => {
      const c = await startCall();
      c.reuseFrameBuffer = true;
      c.llm.willAnswer(['We open at nine.']);
      await c.callerSays('What are your opening hours?');
      expect(c.asr.sessions).toHaveLength(1);
      // The recogniser got the caller's speech (from the caller-audio ring, then live), not the zeroed buffer.
      expect(c.asr.sessions[0]!.pushedEnergy).toBeGreaterThan(0);
      expect(c.tts.texts).toEqual(['We open at nine.']);
    });

    it('sends the first sentence to TTS and the call while the model is still writing', async () => {
      const c = await startCall();
      const stall = gate();
      c.llm.willAnswer(['Sure, I can help with that. ', 'What is', stall.opened, ' your order number?']);
      await c.callerSays('I have a question about my order.');

      expect(c.tts.texts).toEqual(['Sure, I can help with that.']);
      const playedWhileWriting = c.output.playedSamples;
      expect(playedWhileWriting).toBeGreaterThan(0);

      stall.open();
      await settle();
      expect(c.tts.texts).toEqual(['Sure, I can help with that.', 'What is your order number?']);
      expect(c.output.playedSamples).toBeGreaterThan(playedWhileWriting);
      await c.echoAll();
      expect(c.turns.at(-1)).toMatchObject({ role: 'assistant', text: 'Sure, I can help with that. What is your order number?', interrupted: false });
    });
  });

  describe('barge-in', () => {
    const FIRST = 'Our store opens at nine.';
    const SECOND = 'We close at five in the evening, every day of the week.';

    it('clears the audio, aborts the model and keeps only what was heard when the caller talks over the agent', async () => {
      const c = await startCall();
      const neverOpened = gate();
      c.llm.willAnswer([`${FIRST} `, `${SECOND} `, 'Is there', neverOpened.opened, ' anything else?'], ['On Sunday we are closed.']);
      await c.callerSays('When are you open?');
      // One mark per chunk (each is under the mark interval): the caller has heard the first chunk only.
      expect(c.output.marks).toEqual(['r1:1', 'r1:2']);
      c.output.echoPlayed(1);
      await settle();

      c.asr.willHear('What about Sunday?');
      await c.talk(300);
      expect(c.output.clears).toBe(0);
      await c.talk(300);
      expect(c.output.clears).toBe(1);
      expect(c.llm.requests[0]!.signal?.aborted).toBe(true);
      expect(c.eventsOf('barge_in')).toEqual([expect.objectContaining({ cause: 'speech', replyId: 'r1', heardText: FIRST })]);
      expect(c.turns[1]).toEqual({ role: 'assistant', source: 'speech', text: `${FIRST} ${SECOND}`, heardText: FIRST, interrupted: true });
      expect(c.eventsOf('assistant_turn_cut')).toEqual([{ index: 1, why: 'barge_in' }]);
      // The cut reply keeps its waterfall, with when it was cut (the moment the clear went out).
      expect(c.recorder.latencies).toHaveLength(1);
      const cut = c.recorder.latencies[0]!;
      const clearedAtMs = (c.eventsOf('barge_in')[0] as { clearedAtMs: number }).clearedAtMs;
      expect(cut).toMatchObject({ turnIndex: 1, interruptedAtMs: clearedAtMs, firstMarkEchoedMs: expect.any(Number) });
      const steps = [cut.endOfSpeechMs, cut.endOfTurnFrameMs, cut.endOfTurnMs, cut.asrFinalMs, cut.llmFirstTokenMs, cut.ttsFirstByteMs, cut.firstFrameSentMs, cut.interruptedAtMs];
      for (let i = 1; i < steps.length; i++) expect(steps[i]).toBeGreaterThanOrEqual(steps[i - 1] as number);

      await c.pause(700);
      expect(c.messagesOf(1)).toEqual([system, user('When are you open?'), assistant(FIRST), user('What about Sunday?')]);
      // Nothing more of the cut reply was synthesised or played.
      expect(c.tts.texts).toEqual([FIRST, SECOND, 'On Sunday we are closed.']);
      const afterClear = c.output.log.slice(c.output.log.findIndex((entry) => entry.type === 'clear') + 1);
      expect(afterClear.filter((entry) => entry.type === 'mark').every((entry) => entry.type === 'mark' && entry.name.startsWith('r2:'))).toBe(true);
    });

    it('cuts the history to what was heard even when the whole reply had already been sent', async () => {
      const c = await startCall();
      c.llm.willAnswer([`${FIRST} `, SECOND], ['On Sunday we are closed.']);
      await c.callerSays('When are you open?');
      expect(c.output.marks).toEqual(['r1:1', 'r1:2']);
      c.output.echoPlayed(1);
      await settle();

      await c.callerSays('What about Sunday?');
      expect(c.output.clears).toBe(1);
      expect(c.turns[1]).toMatchObject({ heardText: FIRST, interrupted: true });
      expect(c.messagesOf(1)).toEqual([system, user('When are you open?'), assistant(FIRST), user('What about Sunday?')]);
    });

    it('treats speech shorter than interruptions.minSpeechMs as a backchannel: no clear, no new turn', async () => {
      const c = await startCall();
      expect(DEFAULTS.interruptions.minSpeechMs).toBe(400);
      c.llm.willAnswer([`${FIRST} `, SECOND], ['Goodbye.']);
      await c.callerSays('When are you open?');

      // "Uh-huh": long enough to be speech (250 ms) but not an interruption (400 ms).
      await c.talk(300);
      await c.pause(700);
      expect(c.output.clears).toBe(0);
      expect(c.eventsOf('backchannel_ignored')).toHaveLength(1);
      expect(c.eventsOf('barge_in')).toEqual([]);
      expect(c.asr.sessions[1]!.cancelled).toBe(true);
      expect(c.llm.requests).toHaveLength(1);

      await c.echoAll();
      expect(c.turns.map((turn) => [turn.role, turn.interrupted])).toEqual([
        ['user', false],
        ['assistant', false],
      ]);
      await c.callerSays('Thanks, bye.');
      expect(c.messagesOf(1)).toEqual([system, user('When are you open?'), assistant(`${FIRST} ${SECOND}`), user('Thanks, bye.')]);
    });

    it('does not interrupt when interruptions are disabled', async () => {
      const c = await startCall({ config: { interruptions: { enabled: false } } });
      c.llm.willAnswer([`${FIRST} `, SECOND]);
      await c.callerSays('When are you open?');
      await c.talk(800);
      expect(c.output.clears).toBe(0);
      expect(c.eventsOf('barge_in')).toEqual([]);
    });
  });

  describe('keypad input', () => {
    it('sends the digits to the model as a sentence and answers it', async () => {
      const c = await startCall();
      c.llm.willAnswer(['Thank you, I found your account.']);
      await c.pressKeys('1', '2', '3', '#');
      expect(c.messagesOf(0)).toEqual([system, user('The caller pressed 1 2 3 #')]);
      expect(c.turns).toEqual([{ role: 'user', source: 'dtmf', text: 'The caller pressed 1 2 3 #', heardText: null, interrupted: false }]);
      expect(c.tts.texts).toEqual(['Thank you, I found your account.']);
      await c.echoAll();
      expect(c.turns[1]).toMatchObject({ role: 'assistant', source: 'speech', interrupted: false });
      // No speech was recognised for this turn.
      expect(c.recorder.latencies[0]).toMatchObject({ turnIndex: 1, endOfSpeechMs: null, asrFinalMs: null });
    });
  });

  describe('speculative replies', () => {
    /** Speech, a stable partial 100 ms into the pause, and enough pause for the speculation (150 ms) but not the turn end (500 ms). */
    async function pauseWithStablePartial(c: CallUnderTest, partial: string): Promise<void> {
      await c.talk(600);
      await c.pause(100);
      c.asr.sessions.at(-1)!.emitPartial(partial, true);
      await c.pause(200);
    }

    it('starts the model on a stable partial during the pause and plays it when the final transcript agrees', async () => {
      const c = await startCall({ supportsPartials: true });
      c.llm.willAnswer(['We open at nine.']);
      c.asr.willHear('What time do you open?');
      await pauseWithStablePartial(c, 'what time do you open');

      // The turn has not ended: no final transcript yet, but the model is already answering.
      expect(c.asr.sessions[0]!.finished).toBe(false);
      expect(c.turns).toEqual([]);
      expect(c.llm.requests).toHaveLength(1);
      expect(c.messagesOf(0)).toEqual([system, user('what time do you open')]);
      // Synthesised ahead, but held back until the transcript agrees.
      expect(c.tts.texts).toEqual(['We open at nine.']);
      expect(c.output.playedSamples).toBe(0);

      await c.pause(400);
      expect(c.asr.sessions[0]!.finished).toBe(true);
      expect(c.eventsOf('speculation_adopted')).toEqual([{ replyId: 'r1' }]);
      expect(c.llm.requests).toHaveLength(1);
      expect(c.output.playedSamples).toBeGreaterThan(0);
      await c.echoAll();
      expect(c.turns).toEqual([
        { role: 'user', source: 'speech', text: 'What time do you open?', heardText: null, interrupted: false },
        { role: 'assistant', source: 'speech', text: 'We open at nine.', heardText: null, interrupted: false },
      ]);
    });

    it('drops the speculative reply unplayed and asks again when the final transcript differs', async () => {
      const c = await startCall({ supportsPartials: true });
      c.llm.willAnswer(['We open at nine.'], ['We close at five.']);
      c.asr.willHear('What time do you close?');
      await pauseWithStablePartial(c, 'what time do you open');
      expect(c.llm.requests).toHaveLength(1);

      await c.pause(400);
      expect(c.eventsOf('speculation_discarded')).toEqual([{ replyId: 'r1' }]);
      expect(c.llm.requests[0]!.signal?.aborted).toBe(true);
      expect(c.llm.requests).toHaveLength(2);
      expect(c.messagesOf(1)).toEqual([system, user('What time do you close?')]);
      expect(c.output.marks.length).toBeGreaterThan(0);
      expect(c.output.marks.every((name) => name.startsWith('r2:'))).toBe(true);
      await c.echoAll();
      expect(c.turns.at(-1)).toMatchObject({ role: 'assistant', text: 'We close at five.' });
    });

    it('drops a speculation started during a backchannel', async () => {
      const c = await startCall({ supportsPartials: true });
      c.llm.willAnswer(['Our store opens at nine. ', 'We close at five in the evening, every day of the week.'], ['Yes?']);
      await c.callerSays('When are you open?');
      // The reply is playing (no marks echoed); the caller says "okay" with a stable partial.
      await c.talk(300);
      await c.pause(100);
      c.asr.sessions.at(-1)!.emitPartial('okay', true);
      await c.pause(600);
      expect(c.eventsOf('backchannel_ignored')).toHaveLength(1);
      expect(c.llm.requests).toHaveLength(2);
      expect(c.llm.requests[1]!.signal?.aborted).toBe(true);
    });
  });

  describe('closing', () => {
    it('records a reply cut by the end of the call and releases the engines', async () => {
      const c = await startCall();
      c.llm.willAnswer(['Our store opens at nine.']);
      await c.callerSays('When are you open?');
      c.session.close('caller_hung_up');
      expect(c.turns[1]).toMatchObject({ role: 'assistant', interrupted: true, heardText: '' });
      expect(c.eventsOf('assistant_turn_cut')).toEqual([{ index: 1, why: 'call_ended' }]);
      expect(c.eventsOf('agent_closed')).toEqual([{ reason: 'caller_hung_up' }]);
      expect(c.vad.closed).toBe(true);
      // Audio after the end is ignored.
      c.session.pushAudio(new Int16Array(160));
      await c.pressKeys('1', '#');
      expect(c.llm.requests).toHaveLength(1);
    });
  });

  describe('while the engines get ready', () => {
    it('hears what the caller said meanwhile once they are', async () => {
      const ready = gate();
      const c = await startCall({ enginesReady: ready.opened });
      c.asr.willHear('What are your opening hours?');
      c.llm.willAnswer(['We open at nine.']);
      await c.talk(600);
      ready.open();
      await c.pause(700);
      expect(c.turns[0]).toMatchObject({ role: 'user', source: 'speech', text: 'What are your opening hours?' });
      expect(c.tts.texts).toEqual(['We open at nine.']);
    });

    it('ends the call, saying why, rather than hold caller audio without end when they take longer than 10 s of it', async () => {
      const ready = gate();
      const c = await startCall({ enginesReady: ready.opened });
      await c.talk(10_000);
      expect(c.endReasons).toEqual([]);
      await c.talk(20);
      expect(c.endReasons).toEqual(['agent_error']);
      expect(c.eventsOf('error')).toEqual([expect.objectContaining({ code: 'engines_slow' })]);
    });
  });
});
