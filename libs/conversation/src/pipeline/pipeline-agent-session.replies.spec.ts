/**
 * A whole pipeline call on scripted engines (libs/testing/src/conversation/pipeline-call.ts): tools, engine failures,
 * the idle caller, the maximum duration, and where utterances end.
 */
import { EngineError } from '@switchboard/inference';
import { succeeded } from '../tools/tool-outcome';
import { assistant, DEFAULTS, FakeToolRunner, system, usePipelineCalls, user, type CallUnderTest } from '../../../testing/src/conversation/pipeline-call';
import { gate, settle, type LlmStep } from '@switchboard/testing';

describe('PipelineAgentSession', () => {
  const startCall = usePipelineCalls();

  describe('tools', () => {
    it('runs a tool call and sends its result back to the model in a second request', async () => {
      const tools = new FakeToolRunner({ lookup_order: succeeded({ status: 'shipped' }) });
      const c = await startCall({ tools });
      const toolCall = { type: 'tool_call' as const, id: 'call_1', name: 'lookup_order', arguments: '{"orderId":"123456"}' };
      c.llm.willAnswer([toolCall], ['Your order has shipped.']);
      await c.callerSays('Where is order 123456?');

      expect(c.llm.requests[0]!.tools).toEqual(tools.definitions);
      expect(tools.runs).toHaveLength(1);
      expect(tools.runs[0]!.call).toEqual({ id: 'call_1', name: 'lookup_order', arguments: '{"orderId":"123456"}' });
      expect(tools.runs[0]!.context).toMatchObject({ callId: 'call-1', organizationId: 'org-1', agentId: 'agent-1', callerNumber: '+15550001111' });
      expect(c.messagesOf(1)).toEqual([
        system,
        user('Where is order 123456?'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"123456"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"result":{"status":"shipped"}}' },
      ]);
      expect(c.recorder.toolInvocations).toEqual([
        expect.objectContaining({ toolCallId: 'call_1', name: 'lookup_order', arguments: { orderId: '123456' }, result: { status: 'shipped' }, error: null }),
      ]);
      await c.echoAll();
      expect(c.turns[1]).toMatchObject({ role: 'assistant', text: 'Your order has shipped.' });
    });

    it('hangs up for end_call only after the goodbye has been played', async () => {
      const tools = new FakeToolRunner({ end_call: succeeded({ ended: true }, { type: 'end_call', goodbye: 'Thank you for calling. Goodbye.' }) });
      const c = await startCall({ tools });
      c.llm.willAnswer(['Glad I could help, goodbye!', { type: 'tool_call', id: 'call_9', name: 'end_call', arguments: '{}' }]);
      await c.callerSays("That's all, thanks.");

      // The model said its own goodbye, so the tool's is not added; no second request.
      expect(c.tts.texts).toEqual(['Glad I could help,', 'goodbye!']);
      expect(c.llm.requests).toHaveLength(1);
      expect(c.callControl.hangUps).toEqual([]);
      expect(c.endReasons).toEqual([]);

      await c.echoAll();
      expect(c.callControl.hangUps).toEqual(['agent_hangup']);
      expect(c.endReasons).toEqual(['agent_hangup']);
    });

    /** A tool that answers when the test says so. */
    function slowTool(): { tools: FakeToolRunner; finish: () => void } {
      const done = gate();
      const tools = new FakeToolRunner({ lookup_order: succeeded({ status: 'shipped' }) });
      tools.slowUntil = done.opened;
      return { tools, finish: done.open };
    }
    const lookupCall = { type: 'tool_call' as const, id: 'call_1', name: 'lookup_order', arguments: '{}' };

    it('lets a new caller turn replace a reply whose tool is still running, instead of speaking both', async () => {
      const { tools, finish } = slowTool();
      const c = await startCall({ tools });
      // The third answer is there for the replaced reply's second round, which must never ask for it.
      c.llm.willAnswer(['Let me check that for you. ', lookupCall], ['Sure, what is the order number?'], ['It has shipped.']);
      await c.callerSays('Where is my order?');
      // The caller heard the words before the tool call; the tool is still running.
      await c.echoAll();
      await c.callerSays('Actually, a different order.');

      expect(tools.runs[0]!.context.signal.aborted).toBe(true);
      expect(c.eventsOf('assistant_turn_cut')).toEqual([expect.objectContaining({ why: 'superseded' })]);
      expect(c.messagesOf(1)).toEqual([system, user('Where is my order?'), assistant('Let me check that for you.'), user('Actually, a different order.')]);

      finish();
      await settle();
      // The replaced reply neither asks the model again nor speaks.
      expect(c.llm.requests).toHaveLength(2);
      expect(c.tts.texts).toEqual(['Let me check that for you.', 'Sure, what is the order number?']);
    });

    it('keeps a tool round that finishes after a barge-in out of the history', async () => {
      const { tools, finish } = slowTool();
      const c = await startCall({ tools });
      c.llm.willAnswer(['Let me check that for you. ', lookupCall], ['Okay.'], ['Bye.']);
      await c.callerSays('Where is my order?');
      // Still playing (no mark echoed) when the caller talks over it.
      await c.callerSays('Never mind.');
      expect(c.output.clears).toBe(1);
      expect(tools.runs[0]!.context.signal.aborted).toBe(true);

      finish();
      await settle();
      await c.echoAll();
      await c.callerSays('Goodbye.');
      expect(c.messagesOf(2)).toEqual([system, user('Where is my order? Never mind.'), assistant('Okay.'), user('Goodbye.')]);
    });

    it("says the end_call tool's goodbye when the model said nothing", async () => {
      const tools = new FakeToolRunner({ end_call: succeeded(null, { type: 'end_call', goodbye: 'Thank you for calling. Goodbye.' }) });
      const c = await startCall({ tools });
      c.llm.willAnswer([{ type: 'tool_call', id: 'call_9', name: 'end_call', arguments: '{}' }]);
      await c.pressKeys('#');
      expect(c.tts.texts).toEqual(['Thank you for calling. Goodbye.']);
      await c.echoAll();
      expect(c.endReasons).toEqual(['agent_hangup']);
    });
  });

  describe('engine failures', () => {
    const failure = (): EngineError => new EngineError('scripted-llm', 'unavailable', 'upstream returned 503', true);

    it('apologises when the model fails mid-answer, after what was already sent has played', async () => {
      const c = await startCall();
      const spoken = gate();
      c.llm.willAnswer(['Let me look that up for you. ', 'One', spoken.opened, failure()]);
      await c.callerSays('Is my order ready?');
      expect(c.tts.texts).toEqual(['Let me look that up for you.']);

      spoken.open();
      await settle();
      expect(c.eventsOf('llm_error')).toEqual([{ engine: 'scripted-llm', code: 'unavailable', message: 'upstream returned 503', retryable: true }]);
      // The sentence already sent is not cut off: the apology waits until the call says it has played.
      expect(c.tts.texts).toEqual(['Let me look that up for you.']);
      await c.echoAll();
      expect(c.turns[1]).toEqual({ role: 'assistant', source: 'speech', text: 'Let me look that up for you.', heardText: 'Let me look that up for you.', interrupted: true });
      expect(c.eventsOf('assistant_turn_cut')).toEqual([{ index: 1, why: 'llm_error' }]);
      expect(c.tts.texts).toEqual(['Let me look that up for you.', DEFAULTS.apologyMessage]);

      await c.echoAll();
      expect(c.turns[2]).toMatchObject({ role: 'assistant', source: 'apology', text: DEFAULTS.apologyMessage, interrupted: false });
      expect(c.endReasons).toEqual([]);
    });

    it('gives up and ends the call after three failed answers in a row', async () => {
      const c = await startCall();
      for (let attempt = 1; attempt <= 3; attempt++) {
        c.llm.willAnswer([failure()]);
        await c.pressKeys('#');
        if (attempt < 3) await c.echoAll();
      }
      expect(c.eventsOf('llm_error')).toHaveLength(3);
      expect(c.eventsOf('agent_gave_up')).toEqual([{ consecutiveFailures: 3 }]);
      expect(c.tts.texts).toEqual([DEFAULTS.apologyMessage, DEFAULTS.apologyMessage]);
      expect(c.callControl.hangUps).toEqual(['agent_error']);
      expect(c.endReasons).toEqual(['agent_error']);
      // Each apology is in the history once, after the caller heard it.
      const pressed = user('The caller pressed #');
      expect(c.messagesOf(2)).toEqual([system, pressed, assistant(DEFAULTS.apologyMessage), pressed, assistant(DEFAULTS.apologyMessage), pressed]);
    });

    it('apologises when synthesis fails, recording a tts_error', async () => {
      const c = await startCall();
      c.tts.failOn('We open at nine.', new EngineError('fake-tts', 'timeout', 'no audio in time', true));
      c.llm.willAnswer(['We open at nine.']);
      await c.callerSays('When are you open?');
      expect(c.eventsOf('tts_error')).toEqual([{ engine: 'fake-tts', code: 'timeout', message: 'no audio in time', retryable: true }]);
      expect(c.tts.texts).toEqual(['We open at nine.', DEFAULTS.apologyMessage]);
      await c.echoAll();
      expect(c.turns.map((turn) => turn.source)).toEqual(['speech', 'apology']);
    });

    it('apologises when the recogniser fails, recording an asr_error', async () => {
      const c = await startCall();
      await c.callerSays(new EngineError('scripted-asr', 'unavailable', 'recogniser down', true));
      expect(c.eventsOf('asr_error')).toEqual([{ engine: 'scripted-asr', code: 'unavailable', message: 'recogniser down', retryable: true }]);
      expect(c.llm.requests).toEqual([]);
      expect(c.tts.texts).toEqual([DEFAULTS.apologyMessage]);
    });

    it('starts counting again after an answer that worked', async () => {
      const c = await startCall();
      for (const answer of [[failure()], ['Here you go.'], [failure()], [failure()]] as LlmStep[][]) {
        c.llm.willAnswer(answer);
        await c.pressKeys('#');
        await c.echoAll();
      }
      expect(c.eventsOf('llm_error')).toHaveLength(3);
      expect(c.eventsOf('agent_gave_up')).toEqual([]);
      expect(c.endReasons).toEqual([]);
    });
  });

  describe('idle caller', () => {
    it('prompts after promptAfterMs, then says goodbye and ends the call after maxPrompts', async () => {
      const c = await startCall({ config: { idle: { promptAfterMs: 5000, maxPrompts: 2 } } });
      await c.wait(4900);
      expect(c.tts.texts).toEqual([]);
      await c.wait(100);
      expect(c.tts.texts).toEqual([DEFAULTS.idle.prompt]);
      await c.echoAll();

      await c.wait(5000);
      expect(c.tts.texts).toEqual([DEFAULTS.idle.prompt, DEFAULTS.idle.prompt]);
      await c.echoAll();

      await c.wait(5000);
      expect(c.tts.texts.at(-1)).toBe(DEFAULTS.idle.goodbye);
      expect(c.eventsOf('idle_timeout')).toEqual([{ prompts: 2 }]);
      expect(c.endReasons).toEqual([]);
      await c.echoAll();
      expect(c.callControl.hangUps).toEqual(['idle_timeout']);
      expect(c.endReasons).toEqual(['idle_timeout']);
      expect(c.turns.map((turn) => turn.source)).toEqual(['idle_prompt', 'idle_prompt', 'closing']);
    });

    it('puts a prompt the caller heard in the history once', async () => {
      const c = await startCall({ config: { idle: { promptAfterMs: 5000 } } });
      await c.wait(5000);
      await c.echoAll();
      c.llm.willAnswer(['Great, how can I help?']);
      await c.callerSays('Yes, sorry.');
      expect(c.messagesOf(0)).toEqual([system, assistant(DEFAULTS.idle.prompt), user('Yes, sorry.')]);
    });

    it('does not prompt while the caller is answering', async () => {
      const c = await startCall({ config: { idle: { promptAfterMs: 1000 } } });
      c.llm.willAnswer(['Sure.']);
      // The caller starts talking 500 ms in; speech is confirmed 250 ms later, before the prompt is due.
      await c.pause(500);
      await c.callerSays('Hello?');
      expect(c.tts.texts).toEqual(['Sure.']);
    });
  });

  describe('maximum duration', () => {
    it('says the time-limit message and ends the call', async () => {
      const c = await startCall({ config: { maxDurationS: 10, idle: { promptAfterMs: 600_000 } } });
      await c.wait(9_900);
      expect(c.tts.texts).toEqual([]);
      await c.wait(100);
      expect(c.eventsOf('max_duration_reached')).toEqual([{ maxDurationS: 10 }]);
      expect(c.tts.texts).toEqual([DEFAULTS.maxDurationMessage]);
      await c.echoAll();
      expect(c.callControl.hangUps).toEqual(['max_duration']);
      expect(c.endReasons).toEqual(['max_duration']);
      expect(c.turns).toEqual([{ role: 'assistant', source: 'closing', text: DEFAULTS.maxDurationMessage, heardText: null, interrupted: false }]);
    });

    it('cuts a reply that is still playing when the time is up', async () => {
      const c = await startCall({ config: { maxDurationS: 10, idle: { promptAfterMs: 600_000 } } });
      const neverOpened = gate();
      c.llm.willAnswer(['Our store opens at nine. ', 'And', neverOpened.opened]);
      await c.callerSays('When are you open?');
      await c.wait(10_000);
      expect(c.output.clears).toBe(1);
      expect(c.llm.requests[0]!.signal?.aborted).toBe(true);
      expect(c.turns[1]).toMatchObject({ role: 'assistant', interrupted: true, heardText: '' });
      expect(c.tts.texts.at(-1)).toBe(DEFAULTS.maxDurationMessage);
      await c.echoAll();
      expect(c.endReasons).toEqual(['max_duration']);
    });
  });

  describe('the longest reply (maxReplyMs)', () => {
    /** 40 characters: 80 ms of the fake TTS's audio. */
    const sentence = (n: number) => `This is sentence number ${String(n).padStart(2, '0')} of the answer. `;

    it('stops a model that never ends at exactly maxReplyMs of audio, stops generating, and says so', async () => {
      const c = await startCall({ config: { maxReplyMs: 1000 } });
      const neverEnds = gate();
      // 30 sentences (2.4 s of audio), then a model that stalls without ever finishing.
      c.llm.willAnswer([...Array.from({ length: 30 }, (_, i) => sentence(i + 1)), neverEnds.opened]);
      await c.callerSays('Tell me everything.');
      await c.wait(100);

      expect(c.output.playedSamples).toBe(16_000);
      expect(c.llm.requests[0]!.signal?.aborted).toBe(true);
      expect(c.eventsOf('reply_limit_reached')).toEqual([expect.objectContaining({ replyId: 'r1', maxReplyMs: 1000 })]);
      // Nothing past the limit is synthesised beyond the chunks already in flight.
      expect(c.tts.texts.length).toBeLessThanOrEqual(14);
      // The reply plays out to its end: no clear, its utterance ended, and what was heard is its turn.
      expect(c.output.clears).toBe(0);
      expect(c.output.sequence.at(-1)).toBe('end');
      await c.echoAll();
      const heard = Array.from({ length: 13 }, (_, i) => sentence(i + 1).trim()).join(' ');
      expect(c.turns[1]).toMatchObject({ role: 'assistant', interrupted: false, text: heard });
      c.llm.willAnswer(['Anything else?']);
      await c.callerSays('Thanks.');
      expect(c.messagesOf(1).slice(-2)).toEqual([assistant(heard), user('Thanks.')]);
    });
  });

  describe('end of utterance (the edge pads only there, and sends the marks that waited for it)', () => {
    /** The output's log from the first audio on, with consecutive plays folded into one. */
    const shape = (c: CallUnderTest) => c.output.sequence.filter((entry, index, all) => entry !== 'play' || all[index - 1] !== 'play');

    it('ends a reply once, after its last chunk and final mark, not between its chunks', async () => {
      const c = await startCall();
      c.llm.willAnswer(['We open at nine. ', 'We close at five.']);
      await c.callerSays('When are you open?');
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'play', 'mark:r1:2', 'end']);
    });

    it('ends a scripted line (the first message) after its final mark', async () => {
      const c = await startCall({ config: { firstMessage: 'Hello, thanks for calling Acme.' } });
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'end']);
    });

    it('ends the words before a tool call while the tool runs, and the filler line, before the answer', async () => {
      const done = gate();
      const tools = new FakeToolRunner({ lookup_order: succeeded({ status: 'shipped' }) });
      tools.fillerFor = () => 'One moment.';
      tools.slowUntil = done.opened;
      const c = await startCall({ tools });
      c.llm.willAnswer(['Let me check. ', { type: 'tool_call', id: 'call_1', name: 'lookup_order', arguments: '{}' }], ['It has shipped.']);
      await c.callerSays('Where is my order?');
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'end']);
      await c.wait(1000);
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'end', 'play', 'mark:r1:2', 'end']);
      done.open();
      await settle();
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'end', 'play', 'mark:r1:2', 'end', 'play', 'mark:r1:3', 'end']);
    });

    it('ends what was already sent when the model fails mid-answer, so its marks come back before the apology', async () => {
      const c = await startCall();
      const spoken = gate();
      c.llm.willAnswer(['We open at nine. ', 'And', spoken.opened, new Error('connection reset')]);
      await c.callerSays('When are you open?');
      expect(shape(c)).toEqual(['play', 'mark:r1:1']);
      spoken.open();
      await settle();
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'end']);
      await c.echoAll();
      expect(shape(c)).toEqual(['play', 'mark:r1:1', 'end', 'play', 'mark:r2:1', 'end']);
    });

    it('sends nothing more after a barge-in clear: the cut reply has nothing left to end', async () => {
      const c = await startCall();
      const neverOpened = gate();
      c.llm.willAnswer(['Our store opens at nine. ', 'Is there', neverOpened.opened, ' anything else?'], ['Sure.']);
      await c.callerSays('When are you open?');
      c.asr.willHear('Stop.');
      await c.talk(600);
      expect(c.output.clears).toBe(1);
      const afterClear = c.output.sequence.slice(c.output.sequence.indexOf('clear') + 1);
      expect(afterClear.every((entry) => entry === 'end')).toBe(true);
    });
  });
});
