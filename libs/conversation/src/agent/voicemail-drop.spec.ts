/**
 * The voicemail drop on both conversational engines, on the scripted parts their own specs use:
 * the pipeline's fake recogniser, model and voice, the realtime engine's scripted model, and
 * the call's playback buffer as a fake output whose marks the test echoes. Time is Jest's fake clock.
 */
import { encodeMulaw } from '@switchboard/audio';
import type { AgentCallContext } from './agent-session';
import { parseAgentConfig } from '@switchboard/agent-config';
import { callerFrame, FakeAudioOutput, FakeCallControl, FakeTts, ScriptedAsr, ScriptedLlm, ScriptedSpeechEngine, ScriptedVad, settle } from '@switchboard/testing';
import { PipelineAgentSession } from '../pipeline/pipeline-agent-session';
import { RealtimeAgentSession } from '../realtime/realtime-agent-session';
import { InMemoryConversationRecorder } from '../records/conversation-records';
import { succeeded } from '../tools/tool-outcome';
import type { AgentSession } from './agent-session';

const GREETING = 'Hello, this is Acme calling about your order from last week.';
const MESSAGE = 'Hi {{call.params.name}}, this is Acme. Please call us back.';
const SPOKEN = 'Hi Ada, this is Acme. Please call us back.';

class Call {
  readonly output = new FakeAudioOutput();
  readonly recorder = new InMemoryConversationRecorder();
  readonly callControl = new FakeCallControl();
  readonly endReasons: string[] = [];
  readonly context: AgentCallContext;
  readonly llm = new ScriptedLlm();
  readonly tts = new FakeTts();
  readonly asr = new ScriptedAsr();
  readonly speech = new ScriptedSpeechEngine();
  readonly session: AgentSession;

  constructor(
    readonly engine: 'pipeline' | 'realtime',
    options: { voicemailMessage?: string | null; answeredBy?: string | null } = {},
  ) {
    const config = parseAgentConfig({ firstMessage: GREETING });
    this.context = {
      callId: 'call-1',
      organizationId: 'org-1',
      agentId: 'agent-1',
      agentConfigVersion: 1,
      config,
      streamParameters: { name: 'Ada' },
      callerNumber: '+15550001111',
      calledNumber: '+15550002222',
      callStartedAt: new Date(),
      answeredBy: options.answeredBy ?? null,
      voicemailMessage: options.voicemailMessage === undefined ? MESSAGE : options.voicemailMessage,
      recorder: this.recorder,
      callControl: this.callControl,
      endCall: (reason) => this.endReasons.push(reason),
    };
    const tools = { definitions: [], fillerFor: () => undefined, run: async () => succeeded(null) };
    this.session =
      engine === 'pipeline'
        ? new PipelineAgentSession(this.context, config, this.output, tools, Promise.resolve({ vad: new ScriptedVad('call-1'), asr: this.asr, llm: this.llm, tts: this.tts }))
        : new RealtimeAgentSession(this.context, config, this.output, { tools, engine: Promise.resolve(this.speech), createVad: async () => new ScriptedVad('call-1') });
    this.output.connect((name, cleared) => this.session.onMarkEchoed(name, cleared));
  }

  /** The carrier's verdict reaches the live agent, as the edge passes it on. */
  verdict(answeredBy: string): void {
    this.context.answeredBy = answeredBy;
    this.session.onAnsweredBy?.(answeredBy);
  }

  /** The agent says a line: the pipeline's voice synthesises it; the realtime model is asked for it and speaks it. */
  async lineSpoken(responseId: string, text: string): Promise<void> {
    if (this.engine === 'realtime') {
      const model = this.speech.sessions[0]!;
      model.speak(responseId, `${responseId}-item`, 10);
      model.transcript(`${responseId}-item`, text);
      model.done(responseId);
    }
    await settle(6);
  }

  async callerTalks(ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 20) {
      await jest.advanceTimersByTimeAsync(20);
      if (this.engine === 'pipeline') this.session.pushAudio!(callerFrame(true));
      else this.session.pushMulaw!(encodeMulaw(callerFrame(true)));
      await settle();
    }
  }

  eventsOf(type: string): Record<string, unknown>[] {
    return this.recorder.events.filter((event) => event.type === type).map((event) => event.payload);
  }
}

describe.each(['pipeline', 'realtime'] as const)('voicemail drop (%s agent)', (engine) => {
  let call: Call | undefined;

  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => {
    call?.session.close('test_over');
    call = undefined;
    jest.useRealTimers();
  });

  async function start(options: ConstructorParameters<typeof Call>[1] = {}): Promise<Call> {
    call = new Call(engine, options);
    await settle(6);
    return call;
  }

  it('cuts the greeting at the beep, says the message, and hangs up once its marks came back', async () => {
    const c = await start();
    await c.lineSpoken('resp-greeting', GREETING);
    c.verdict('machine_end_beep');
    await settle(6);
    // The greeting was said over the machine's own greeting: thrown away at the call edge.
    expect(c.output.clears).toBe(1);
    if (engine === 'pipeline') expect(c.tts.texts.join(' ')).toBe(`${GREETING} ${SPOKEN}`);
    else expect(c.speech.sessions[0]!.responseRequests.at(-1)).toBe(`Say exactly this, and nothing else: "${SPOKEN}"`);
    await c.lineSpoken('resp-voicemail', SPOKEN);
    expect(c.callControl.hangUps).toEqual([]);

    c.output.echoPlayed();
    await settle(6);
    expect(c.eventsOf('voicemail_left')).toEqual([expect.objectContaining({ answeredBy: 'machine_end_beep', message: SPOKEN, heardInFull: true })]);
    expect(c.eventsOf('voicemail_left')[0]!['heardMs']).toBeGreaterThan(0);
    expect(c.callControl.hangUps).toEqual(['voicemail_left']);
    expect(c.endReasons).toEqual(['voicemail_left']);
    expect(c.recorder.turns.map((turn) => [turn.source, turn.interrupted])).toEqual([
      ['first_message', true],
      ['voicemail', false],
    ]);
  });

  it('says the message at once, and no greeting, when the verdict was known before the agent started', async () => {
    const c = await start({ answeredBy: 'machine_end_other' });
    await c.lineSpoken('resp-voicemail', SPOKEN);
    if (engine === 'pipeline') expect(c.tts.texts.join(' ')).toBe(SPOKEN);
    else expect(c.speech.sessions[0]!.responseRequests).toEqual([`Say exactly this, and nothing else: "${SPOKEN}"`]);
    c.output.echoPlayed();
    await settle(6);
    expect(c.callControl.hangUps).toEqual(['voicemail_left']);
  });

  it('answers nothing the machine plays while the message is left (the caller audio is ignored)', async () => {
    const c = await start({ answeredBy: 'machine_end_beep' });
    const before = engine === 'realtime' ? c.speech.sessions[0]!.audioBytesReceived : 0;
    await c.callerTalks(600);
    if (engine === 'realtime') expect(c.speech.sessions[0]!.audioBytesReceived).toBe(before);
    else expect(c.llm.requests).toEqual([]);
    expect(c.eventsOf('barge_in')).toEqual([]);
  });

  it('records a message cut by the end of the call as voicemail_cut, and hangs up nothing', async () => {
    const c = await start({ answeredBy: 'machine_end_beep' });
    await c.lineSpoken('resp-voicemail', SPOKEN);
    c.session.close('stream_stopped');
    await settle(6);
    expect(c.eventsOf('voicemail_cut')).toEqual([expect.objectContaining({ heardInFull: false, heardMs: 0 })]);
    expect(c.eventsOf('voicemail_left')).toEqual([]);
    expect(c.callControl.hangUps).toEqual([]);
    call = undefined;
  });

  it.each<[string, { verdict: string; voicemailMessage?: null }]>([
    ['a person answered', { verdict: 'human' }],
    ['the greeting has only started (Enable mode)', { verdict: 'machine_start' }],
    ['detection could not tell', { verdict: 'unknown' }],
    ['the call has no voicemail', { verdict: 'machine_end_beep', voicemailMessage: null }],
  ])('converses as usual when %s', async (_label, { verdict, voicemailMessage }) => {
    const c = await start({ voicemailMessage });
    c.verdict(verdict);
    await settle(6);
    expect(c.output.clears).toBe(0);
    expect(c.recorder.events.filter((event) => event.type.startsWith('voicemail'))).toEqual([]);
    expect(c.callControl.hangUps).toEqual([]);
  });
});
