/**
 * A whole pipeline call on scripted engines: caller audio goes through a loudness VAD and the real
 * turn detector, transcripts come from a scripted recogniser, the model's tokens from a scripted LLM,
 * audio from a fake TTS through the real QueuedTtsStream, and Twilio's playback buffer is a fake
 * output whose marks the test echoes. Time is Jest's fake clock: 20 ms of caller audio per 20 ms.
 */
import { type ChatMessage, EngineError, type ToolDefinition } from '@switchboard/inference';
import type { AgentCallContext } from '../agent/agent-session';
import type { AgentConfigInput } from '../config/agent-config.schema';
import { parseAgentConfig } from '../config/parse-agent-config';
import { InMemoryConversationRecorder } from '../records/conversation-records';
import type { ToolCallContext, ToolInvocation, ToolOutcome, ToolRunner } from '../tools/tool-contracts';
import { failed, succeeded } from '../tools/tool-outcome';
import { PipelineAgentSession } from './pipeline-agent-session';
import { callerFrame, FakeAudioOutput, FakeCallControl, FakeTts, gate, type LlmStep, ScriptedAsr, ScriptedLlm, ScriptedVad, settle } from '@switchboard/testing';

const SYSTEM_PROMPT = 'You answer calls for Acme. The caller is {{caller.number}}.';
const RENDERED_SYSTEM_PROMPT = 'You answer calls for Acme. The caller is +15550001111.';
const DEFAULTS = parseAgentConfig({});

/** Tools by name with the outcome each returns; records every run. */
class FakeToolRunner implements ToolRunner {
  readonly definitions: ToolDefinition[];
  readonly runs: { call: ToolInvocation; context: ToolCallContext }[] = [];
  /** When set, every run answers only once this settles (a slow business endpoint that ignores the abort). */
  slowUntil: Promise<void> | undefined;

  constructor(private readonly outcomes: Record<string, ToolOutcome> = {}) {
    this.definitions = Object.keys(outcomes).map((name) => ({ name, description: `The ${name} tool`, parameters: { type: 'object', properties: {} } }));
  }

  fillerFor(): string | undefined {
    return undefined;
  }

  async run(call: ToolInvocation, context: ToolCallContext): Promise<ToolOutcome> {
    this.runs.push({ call, context });
    await this.slowUntil;
    return this.outcomes[call.name] ?? failed(`unknown tool ${call.name}`);
  }
}

interface CallOptions {
  config?: AgentConfigInput;
  supportsPartials?: boolean;
  tools?: FakeToolRunner;
}

/** One call to a pipeline agent, with every fake it runs on. */
class CallUnderTest {
  readonly vad = new ScriptedVad('call-1');
  readonly asr: ScriptedAsr;
  readonly llm = new ScriptedLlm();
  readonly tts = new FakeTts();
  readonly output = new FakeAudioOutput();
  readonly recorder = new InMemoryConversationRecorder();
  readonly callControl = new FakeCallControl();
  readonly tools: FakeToolRunner;
  readonly endReasons: string[] = [];
  readonly session: PipelineAgentSession;

  constructor(options: CallOptions = {}) {
    this.asr = new ScriptedAsr(options.supportsPartials ?? false);
    this.tools = options.tools ?? new FakeToolRunner();
    const config = parseAgentConfig({ systemPrompt: SYSTEM_PROMPT, ...options.config });
    const context: AgentCallContext = {
      callId: 'call-1',
      organizationId: 'org-1',
      agentId: 'agent-1',
      agentConfigVersion: 1,
      config,
      streamParameters: {},
      callerNumber: '+15550001111',
      calledNumber: '+15550002222',
      callStartedAt: new Date(),
      recorder: this.recorder,
      callControl: this.callControl,
      endCall: (reason) => this.endReasons.push(reason),
    };
    this.session = new PipelineAgentSession(context, config, this.output, this.tools, Promise.resolve({ vad: this.vad, asr: this.asr, llm: this.llm, tts: this.tts }));
    this.output.connect((name, cleared) => this.session.onMarkEchoed(name, cleared));
  }

  /**
   * Set: frames come in one buffer that is zeroed right after each push, as the call edge reuses
   * its decode buffer; anything that kept a reference instead of a copy would then hold silence.
   */
  reuseFrameBuffer = false;
  private readonly reusedFrame = new Int16Array(160);

  /** The caller talks (loud audio) or is silent for `ms`, in 20 ms frames that arrive in real time. */
  async audio(loud: boolean, ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 20) {
      await jest.advanceTimersByTimeAsync(20);
      if (this.reuseFrameBuffer) {
        this.reusedFrame.set(callerFrame(loud));
        this.session.pushAudio(this.reusedFrame);
        this.reusedFrame.fill(0);
      } else {
        this.session.pushAudio(callerFrame(loud));
      }
      await settle();
    }
  }

  talk(ms: number): Promise<void> {
    return this.audio(true, ms);
  }

  pause(ms: number): Promise<void> {
    return this.audio(false, ms);
  }

  /** A whole caller turn: 600 ms of speech, then the 500 ms pause that ends it (and a little more). */
  async callerSays(text: string | Error): Promise<void> {
    this.asr.willHear(text);
    await this.talk(600);
    await this.pause(700);
  }

  async pressKeys(...digits: string[]): Promise<void> {
    for (const digit of digits) this.session.onDtmf(digit);
    await settle();
  }

  /** Twilio played everything queued so far. */
  async echoAll(): Promise<void> {
    this.output.echoPlayed();
    await settle();
  }

  async wait(ms: number): Promise<void> {
    await jest.advanceTimersByTimeAsync(ms);
    await settle();
  }

  eventsOf(type: string): Record<string, unknown>[] {
    return this.recorder.events.filter((event) => event.type === type).map((event) => event.payload);
  }

  get turns(): { role: string; source: string; text: string; heardText: string | null; interrupted: boolean }[] {
    return this.recorder.turns.map(({ role, source, text, heardText, interrupted }) => ({ role, source, text, heardText, interrupted }));
  }

  messagesOf(request: number): ChatMessage[] {
    const sent = this.llm.requests[request];
    if (!sent) throw new Error(`no LLM request ${request} (made ${this.llm.requests.length})`);
    return sent.messages;
  }
}

const system: ChatMessage = { role: 'system', content: RENDERED_SYSTEM_PROMPT };
const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

describe('PipelineAgentSession', () => {
  let call: CallUnderTest | undefined;

  async function startCall(options: CallOptions = {}): Promise<CallUnderTest> {
    call = new CallUnderTest(options);
    await settle();
    return call;
  }

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
  });

  afterEach(() => {
    call?.session.close('test_over');
    call = undefined;
    jest.useRealTimers();
  });

  describe('first message', () => {
    it('speaks the rendered first message and records it as a first_message turn once heard', async () => {
      const c = await startCall({ config: { firstMessage: 'Hello {{caller.number}}, thanks for calling Acme.' } });
      expect(c.tts.texts).toEqual(['Hello +15550001111, thanks for calling Acme.']);
      expect(c.output.playedSamples).toBeGreaterThan(0);
      expect(c.output.marks).toEqual(['r1:1']);
      // Not recorded until Twilio says it was played.
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
      // The sentence already sent is not cut off: the apology waits until Twilio says it has played.
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
});
