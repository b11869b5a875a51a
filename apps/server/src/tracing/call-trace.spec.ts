import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { AgentCallContext, InMemoryConversationRecorder, TranscriptTurnRecord } from '@switchboard/conversation';
import { EngineError, observedAsr, observedLlm, observedTts } from '@switchboard/inference';
import { EngineObservers, type EngineTarget } from './engine-observer';
import { CallEngineObserver } from '../agent-engines/call-engine-observer';
import { ATTR } from './span-attributes';
import { traceAgentEngine } from './traced-agent-engine';
import {
  callContext,
  doneEvent,
  engineErrors,
  fakeAsr,
  fakeLlm,
  fakeTts,
  inMemoryTracing,
  nextTick,
  noOutput,
  parentOf,
  RecordingAgentEngine,
  speak,
  spanId,
  think,
} from './tracing.test-support';

/** The call's one engine observer as the server builds it, watching the engine of `target`'s step. */
const observing = (target: EngineTarget, observers: EngineObservers): CallEngineObserver => new CallEngineObserver({ [target.step]: target }, observers);

/**
 * Span building from what a pipeline call records: the records are written in the order and shape
 * PipelineAgentSession writes them (turn_ended before the transcript is asked for; an assistant
 * turn, then its waterfall, then why it was cut); scripted engines report to the server's call
 * engine observer.
 */
const CALLER = '+15550001111';
const SAID = ['what are your opening hours', 'we open at nine', 'sorry, something went wrong', 'can you repeat'];
const TARGET = { provider: 'custom', model: 'gpt-test' } as const;

describe('call traces built from the conversation records', () => {
  let setup: ReturnType<typeof inMemoryTracing>;
  let agent: RecordingAgentEngine;
  let context: AgentCallContext;
  const offset = () => Date.now() - context.callStartedAt.getTime();
  const record = (turn: Omit<TranscriptTurnRecord, 'heardText' | 'interrupted' | 'startMs' | 'endMs'> & { interrupted?: boolean; startMs?: number }) =>
    context.recorder.transcriptTurn({ heardText: null, interrupted: false, startMs: offset(), endMs: offset(), ...turn });
  const spans = (name: string): ReadableSpan[] => setup.exporter.getFinishedSpans().filter((span) => span.name === name);

  beforeEach(() => {
    setup = inMemoryTracing();
    agent = new RecordingAgentEngine();
  });

  function startCall(): { session: ReturnType<RecordingAgentEngine['createSession']>; observers: EngineObservers } {
    const engine = traceAgentEngine(agent, setup.tracing);
    const session = engine.createSession(callContext({ callerNumber: CALLER }), noOutput);
    context = agent.contexts[0]!;
    return { session, observers: new EngineObservers(setup.errors, setup.tracing) };
  }

  it('makes one call span, a turn span per exchange and the engine requests under their turn', async () => {
    const { session, observers } = startCall();
    const asr = observedAsr(fakeAsr(async () => SAID[0]!), observing({ step: 'stt', ...TARGET }, observers));
    const llm = observedLlm(
      fakeLlm([
        { events: [{ type: 'text', delta: SAID[1]! }, doneEvent()] },
        { events: [], error: new EngineError('openai-chat', 'bad_request', 'openai-chat: HTTP 400: quoted body', false, { httpStatus: 400 }) },
      ]),
      observing({ step: 'llm', ...TARGET }, observers),
    );
    const tts = observedTts(fakeTts(), observing({ step: 'tts', provider: 'openai', model: 'tts-1' }, observers));

    // A greeting: said before any turn, so under the call itself.
    await speak(tts, 'Hello, Acme here.');
    record({ index: 0, role: 'assistant', source: 'first_message', text: 'Hello, Acme here.' });

    // Turn 0: answered and played out.
    const endOfSpeech = offset() - 400;
    context.recorder.event('turn_ended', { reason: 'silence', endOfSpeechMs: endOfSpeech, endOfTurnMs: offset() });
    await asr.createSession({ callId: 'call-1' }).finish();
    record({ index: 1, role: 'user', source: 'speech', text: SAID[0]! });
    await think(llm);
    await speak(tts, SAID[1]!);
    record({ index: 2, role: 'assistant', source: 'speech', text: SAID[1]! });
    context.recorder.turnLatency({ turnIndex: 2, endOfSpeechMs: endOfSpeech, endOfTurnFrameMs: null, endOfTurnMs: null, asrFinalMs: null, llmFirstTokenMs: null, ttsFirstByteMs: null, firstFrameSentMs: null, firstMarkEchoedMs: endOfSpeech + 650, interruptedAtMs: null });
    await nextTick();

    // A backchannel while nothing plays: not a turn.
    context.recorder.event('turn_ended', { reason: 'silence', endOfSpeechMs: offset(), endOfTurnMs: offset() });
    context.recorder.event('backchannel_ignored', {});

    // Turn 1: the model fails; the apology ends it.
    context.recorder.event('turn_ended', { reason: 'silence', endOfSpeechMs: offset(), endOfTurnMs: offset() });
    await asr.createSession({ callId: 'call-1' }).finish();
    record({ index: 3, role: 'user', source: 'speech', text: SAID[3]! });
    await expect(think(llm)).rejects.toThrow('HTTP 400');
    context.recorder.event('llm_error', { engine: 'openai-chat', code: 'bad_request', message: 'openai-chat: HTTP 400: quoted body' });
    await speak(tts, SAID[2]!);
    record({ index: 4, role: 'assistant', source: 'apology', text: SAID[2]! });
    await nextTick();
    session.close('agent_hangup');

    const [call] = spans('call');
    expect(spans('call')).toHaveLength(1);
    expect(parentOf(call!)).toBeUndefined();
    expect(call!.kind).toBe(SpanKind.SERVER);
    expect(call!.attributes).toEqual({
      [ATTR.callId]: 'call-1',
      [ATTR.organizationId]: 'org-1',
      [ATTR.agentId]: 'agent-1',
      [ATTR.agentConfigVersion]: 3,
      [ATTR.agentEngine]: 'pipeline',
      [ATTR.direction]: 'inbound',
      [ATTR.resumed]: false,
      [ATTR.endReason]: 'agent_hangup',
      [ATTR.callTurns]: 2,
    });
    const turns = spans('turn');
    expect(turns.map((turn) => [turn.attributes[ATTR.turnIndex], turn.attributes[ATTR.turnOutcome], parentOf(turn)])).toEqual([
      [0, 'replied', spanId(call)],
      [1, 'replied', spanId(call)],
    ]);
    expect(turns[0]!.attributes[ATTR.replyLatencyMs]).toBe(650);
    expect(turns[0]!.attributes[ATTR.interrupted]).toBe(false);
    expect(turns[1]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'llm failed' });

    const [greeting, answer, apology] = spans('tts');
    expect(parentOf(greeting!)).toBe(spanId(call));
    expect(parentOf(answer!)).toBe(spanId(turns[0]));
    expect(parentOf(apology!)).toBe(spanId(turns[1]));
    expect(answer!.attributes).toMatchObject({ [ATTR.step]: 'tts', [ATTR.provider]: 'openai', [ATTR.model]: 'tts-1', [ATTR.ttsAudioBytes]: 960, [ATTR.ttsCharacters]: SAID[1]!.length });
    expect(spans('stt').map(parentOf)).toEqual([spanId(turns[0]), spanId(turns[1])]);
    expect(spans('stt')[0]!.attributes).toMatchObject({ [ATTR.sttAudioSeconds]: 1.5, [ATTR.attempts]: 1 });

    const [answered, failed] = spans('llm');
    expect(parentOf(answered!)).toBe(spanId(turns[0]));
    expect(answered!.attributes).toMatchObject({ [ATTR.llmRound]: 0, [ATTR.inputTokens]: 30, [ATTR.outputTokens]: 8, [ATTR.firstResultMs]: 25, [ATTR.llmToolCalls]: 0 });
    expect(parentOf(failed!)).toBe(spanId(turns[1]));
    expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'bad_request' });
    expect(failed!.attributes).toMatchObject({ [ATTR.errorType]: 'bad_request', [ATTR.httpStatus]: 400, [ATTR.retryable]: false });
    expect(await engineErrors(setup.registry, 'custom', 'llm')).toBe(1);

    // Tenant data stays out: no number, no words, no error text.
    const values = setup.exporter.getFinishedSpans().flatMap((span) => Object.values(span.attributes).map(String));
    for (const secret of [CALLER, ...SAID, 'quoted body']) expect(values.some((value) => value.includes(secret))).toBe(false);
    expect(setup.exporter.getFinishedSpans().some((span) => span.status.message?.includes('quoted'))).toBe(false);
  });

  it('marks a barge-in on the turn whose reply was cut, and a DTMF turn of its own', async () => {
    const { session, observers } = startCall();
    const llm = observedLlm(fakeLlm([{ events: [doneEvent()] }, { events: [doneEvent(true)] }, { events: [doneEvent()] }]), observing({ step: 'llm', ...TARGET }, observers));

    context.recorder.event('turn_ended', { endOfSpeechMs: offset(), endOfTurnMs: offset() });
    record({ index: 0, role: 'user', source: 'speech', text: SAID[0]! });
    await think(llm);
    // As PipelineAgentSession.interrupt writes it: the cut turn, its waterfall, why, then the barge-in.
    record({ index: 1, role: 'assistant', source: 'speech', text: SAID[1]!, interrupted: true });
    context.recorder.turnLatency({ turnIndex: 1, endOfSpeechMs: null, endOfTurnFrameMs: null, endOfTurnMs: null, asrFinalMs: null, llmFirstTokenMs: null, ttsFirstByteMs: null, firstFrameSentMs: null, firstMarkEchoedMs: null, interruptedAtMs: offset() });
    context.recorder.event('assistant_turn_cut', { index: 1, why: 'barge_in' });
    context.recorder.event('barge_in', { cause: 'speech', replyId: 'r1' });

    // Keys pressed: a turn with two LLM rounds (a tool round, then the answer).
    record({ index: 2, role: 'user', source: 'dtmf', text: 'The caller pressed 1' });
    await think(llm);
    await think(llm);
    session.close('stream_stopped');

    const turns = spans('turn');
    expect(turns.map((turn) => [turn.attributes[ATTR.turnInput], turn.attributes[ATTR.turnOutcome]])).toEqual([
      ['speech', 'interrupted'],
      ['dtmf', 'call_ended'],
    ]);
    expect(turns[0]!.attributes).toMatchObject({ [ATTR.interrupted]: true, [ATTR.bargeIn]: true, [ATTR.cutReason]: 'barge_in' });
    expect(spans('llm').map((span) => [parentOf(span), span.attributes[ATTR.llmRound]])).toEqual([
      [spanId(turns[0]), 0],
      [spanId(turns[1]), 0],
      [spanId(turns[1]), 1],
    ]);
  });

  it('ends a turn the caller talked past as superseded, and does not let the old reply end the new one', async () => {
    const { session } = startCall();
    context.recorder.event('turn_ended', { endOfSpeechMs: offset(), endOfTurnMs: offset() });
    record({ index: 0, role: 'user', source: 'speech', text: SAID[0]! });
    const firstReplyStartedMs = offset();
    await nextTick();
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The caller's next turn, while the first reply was still being prepared (a tool ran).
    context.recorder.event('turn_ended', { endOfSpeechMs: offset(), endOfTurnMs: offset() });
    record({ index: 1, role: 'user', source: 'speech', text: SAID[3]! });
    // PipelineAgentSession.respond records the superseded reply after the new turn began.
    record({ index: 2, role: 'assistant', source: 'speech', text: SAID[1]!, interrupted: true, startMs: firstReplyStartedMs });
    context.recorder.event('assistant_turn_cut', { index: 2, why: 'superseded' });
    record({ index: 3, role: 'assistant', source: 'speech', text: SAID[2]! });
    await nextTick();
    session.close('stream_stopped');

    expect(spans('turn').map((turn) => [turn.attributes[ATTR.turnIndex], turn.attributes[ATTR.turnOutcome], turn.attributes[ATTR.cutReason]])).toEqual([
      [0, 'superseded', undefined],
      [1, 'replied', undefined],
    ]);
  });

  it('keeps a turn open past the greeting said when a caller who spoke first stops: the answer after it ends the turn', async () => {
    const { session } = startCall();
    const endOfSpeech = offset();
    context.recorder.event('turn_ended', { endOfSpeechMs: endOfSpeech, endOfTurnMs: offset() });
    record({ index: 0, role: 'user', source: 'speech', text: SAID[0]! });
    record({ index: 1, role: 'assistant', source: 'first_message', text: 'Hello, Acme here.' });
    await nextTick();
    record({ index: 2, role: 'assistant', source: 'speech', text: SAID[1]! });
    context.recorder.turnLatency({ turnIndex: 2, endOfSpeechMs: endOfSpeech, endOfTurnFrameMs: null, endOfTurnMs: null, asrFinalMs: null, llmFirstTokenMs: null, ttsFirstByteMs: null, firstFrameSentMs: null, firstMarkEchoedMs: endOfSpeech + 2400, interruptedAtMs: null });
    await nextTick();
    session.close('stream_stopped');

    // The answer's latency lands on the turn: the answer, not the greeting, ended it.
    expect(spans('turn').map((turn) => [turn.attributes[ATTR.turnIndex], turn.attributes[ATTR.turnOutcome], turn.attributes[ATTR.replyLatencyMs]])).toEqual([[0, 'replied', 2400]]);
  });

  it('ends the call span with the reason even when the agent refuses its config, and records the call for the agent unchanged', () => {
    const refusing = new RecordingAgentEngine();
    refusing.createSession = () => {
      throw new Error('config refused');
    };
    const original = callContext();
    const inner = original.recorder;
    expect(() => traceAgentEngine(refusing, setup.tracing).createSession(original, noOutput)).toThrow('config refused');
    expect(spans('call')[0]!.attributes[ATTR.endReason]).toBe('agent_error');
    expect(setup.tracing.find('call-1')).toBeUndefined();
    // The recorder is wrapped in place (the edge keeps its context), and passes everything on.
    original.recorder.event('dtmf', { digit: '1' });
    expect(original.recorder).not.toBe(inner);
    expect((inner as InMemoryConversationRecorder).events).toEqual([{ type: 'dtmf', payload: { digit: '1' } }]);
  });

  it('keeps the session as the edge expects it: the same optional methods, close passed on', () => {
    const engine = traceAgentEngine(agent, setup.tracing);
    const session = engine.createSession(callContext(), noOutput);
    expect(typeof session.pushAudio).toBe('function');
    expect(session.pushMulaw).toBeUndefined();
    expect(session.onAnsweredBy).toBeUndefined();
    session.close('connection_lost');
    expect(agent.closed).toEqual(['connection_lost']);
    expect(spans('call')[0]!.attributes[ATTR.endReason]).toBe('connection_lost');
    expect(setup.tracing.find('call-1')).toBeUndefined();
  });
});
