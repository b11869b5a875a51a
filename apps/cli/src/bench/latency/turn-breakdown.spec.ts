/**
 * The latency bench's arithmetic: how a reply's voice-to-voice time is split, how records of one
 * call are joined into replies, how a barge-in is timed, and how the engine delays are found again
 * for each reply. Pure functions on made-up records: no timers, no sockets.
 */
import type { TranscriptTurnRecord, TurnLatencyRecord } from '@switchboard/conversation';
import { EngineDelayLog, questionNumberIn, questionText, type EngineDelays } from './engine-delay-log';
import { bargeInSample, breakDownCall, breakDownTurn, sumDelays, type CallRecords } from './turn-breakdown';

const NOMINAL: EngineDelays = { asrMs: 40, llmFirstTokenMs: 120, ttsFirstByteMs: 60 };

describe('breakDownTurn', () => {
  // A reply whose milestones leave 1 + 0.5 + 0.25 + 0.5 + 0.75 ms to the platform.
  const milestones = {
    endOfSpeechMs: 10_000,
    decisionFrameMs: 10_520,
    endOfTurnMs: 10_521,
    asrFinalMs: 10_521 + 41 + 0.5,
    llmFirstTokenMs: 10_562.5 + 121 + 0.25,
    ttsFirstByteMs: 10_683.75 + 62 + 0.5,
    firstFrameSentMs: 10_746.25 + 0.75,
  };
  const actual: EngineDelays = { asrMs: 41, llmFirstTokenMs: 121, ttsFirstByteMs: 62 };

  it('splits voice-to-voice into end-of-turn wait + actual engine delays + platform overhead, exactly', () => {
    const split = breakDownTurn(milestones, actual, NOMINAL);
    expect(split.voiceToVoiceMs).toBeCloseTo(747, 9);
    expect(split.endOfTurnWaitMs).toBe(520);
    expect(split.engineDelaysMs).toBe(224);
    expect(split.platformOverheadMs).toBeCloseTo(3, 9);
    expect(split.endOfTurnWaitMs + split.engineDelaysMs + split.platformOverheadMs).toBeCloseTo(split.voiceToVoiceMs, 9);
  });

  it('puts every millisecond of the overhead in exactly one stage, net of the engine inside it', () => {
    const { stages, platformOverheadMs } = breakDownTurn(milestones, actual, NOMINAL);
    expect(stages.vadAndTurnMs).toBeCloseTo(1, 9);
    expect(stages.asrHandOffMs).toBeCloseTo(0.5, 9);
    expect(stages.llmHandOffMs).toBeCloseTo(0.25, 9);
    expect(stages.ttsHandOffMs).toBeCloseTo(0.5, 9);
    expect(stages.playoutMs).toBeCloseTo(0.75, 9);
    const sum = Object.values(stages).reduce((total, value) => total + value, 0);
    expect(sum).toBeCloseTo(platformOverheadMs, 9);
  });

  it('reports the overhead against the scripted delays too: larger by how late the engines answered', () => {
    const split = breakDownTurn(milestones, actual, NOMINAL);
    expect(split.engineDelaysNominalMs).toBe(220);
    expect(split.platformOverheadNominalMs - split.platformOverheadMs).toBeCloseTo(sumDelays(actual) - sumDelays(NOMINAL), 9);
  });
});

describe('breakDownCall', () => {
  const user = (index: number, question: number, endMs: number): TranscriptTurnRecord => ({
    index,
    role: 'user',
    source: 'speech',
    text: questionText(question),
    heardText: null,
    interrupted: false,
    startMs: endMs - 2000,
    endMs,
  });
  const assistant = (index: number, interrupted = false): TranscriptTurnRecord => ({
    index,
    role: 'assistant',
    source: 'speech',
    text: 'Thanks for calling about that,',
    heardText: interrupted ? 'Thanks' : null,
    interrupted,
    startMs: 0,
    endMs: 0,
  });
  const latency = (turnIndex: number, endOfSpeechMs: number): TurnLatencyRecord => ({
    turnIndex,
    endOfSpeechMs,
    endOfTurnFrameMs: endOfSpeechMs + 520,
    interruptedAtMs: null,
    endOfTurnMs: endOfSpeechMs + 521,
    asrFinalMs: endOfSpeechMs + 561.2,
    llmFirstTokenMs: endOfSpeechMs + 681.3,
    ttsFirstByteMs: endOfSpeechMs + 741.4,
    firstFrameSentMs: endOfSpeechMs + 741.5,
    firstMarkEchoedMs: endOfSpeechMs + 1000,
  });
  const turnEnded = (endOfSpeechMs: number, decisionFrameMs: number | null) => ({
    type: 'turn_ended',
    payload: { reason: 'silence', endOfSpeechMs, decisionFrameMs, endOfTurnMs: endOfSpeechMs + 521 },
  });
  const delays = new Map<number, EngineDelays>([
    [1, { asrMs: 40, llmFirstTokenMs: 120, ttsFirstByteMs: 60 }],
    [2, { asrMs: 40.5, llmFirstTokenMs: 120, ttsFirstByteMs: 60 }],
    [3, { asrMs: 40, llmFirstTokenMs: 120, ttsFirstByteMs: 60 }],
    [4, { asrMs: 41, llmFirstTokenMs: 121, ttsFirstByteMs: 61 }],
  ]);

  // Question 1 answered; question 2 answered; question 3's answer interrupted (no latency record); question 4 answered.
  const records: CallRecords = {
    callId: 'call-a',
    transcript: [user(0, 1, 3000), assistant(1), user(2, 2, 9000), assistant(3), user(4, 3, 15000), assistant(5, true), user(6, 4, 19000), assistant(7)],
    latencies: [latency(1, 3000), latency(3, 9000), latency(7, 19000)],
    events: [
      turnEnded(3000, 3520),
      { type: 'barge_in', payload: { cause: 'speech' } },
      turnEnded(9000, 9519),
      turnEnded(15000, 15520),
      turnEnded(19000, 19518),
    ],
  };

  it('joins each latency record with its turn_ended event and the engine delays of the question before it', () => {
    const { turns, unmatched } = breakDownCall(records, (question) => delays.get(question), NOMINAL);
    expect(unmatched).toEqual([]);
    expect(turns.map((turn) => [turn.turnIndex, turn.question])).toEqual([
      [1, 1],
      [3, 2],
      [7, 4],
    ]);
    const last = turns[2]!;
    expect(last.endOfTurnWaitMs).toBe(518);
    expect(last.engines).toEqual(delays.get(4));
    expect(last.voiceToVoiceMs).toBeCloseTo(741.5, 9);
    expect(last.platformOverheadMs).toBeCloseTo(741.5 - 518 - 223, 9);
    expect(turns[1]!.platformOverheadMs).toBeCloseTo(741.5 - 519 - 220.5, 9);
  });

  it('names each reply it cannot join, and why, instead of dropping it', () => {
    const broken: CallRecords = {
      ...records,
      latencies: [{ ...latency(1, 3000), firstFrameSentMs: null }, latency(3, 9000), latency(7, 19000)],
      events: records.events.filter((event) => event.payload.endOfSpeechMs !== 9000),
    };
    const { turns, unmatched } = breakDownCall(broken, (question) => (question === 4 ? undefined : delays.get(question)), NOMINAL);
    expect(turns).toEqual([]);
    expect(unmatched).toEqual([
      'call call-a turn 1: a milestone is missing from its latency record',
      'call call-a turn 3: no turn_ended event with endOfSpeechMs 9000',
      `call call-a turn 7: no engine delays for the user turn before it (${JSON.stringify(questionText(4))})`,
    ]);
  });

  it('does not join a turn_ended event whose decision frame is unknown', () => {
    const unknown: CallRecords = { ...records, latencies: [latency(1, 3000)], events: [turnEnded(3000, null)] };
    expect(breakDownCall(unknown, (question) => delays.get(question), NOMINAL).unmatched).toEqual(['call call-a turn 1: no turn_ended event with endOfSpeechMs 3000']);
  });
});

describe('bargeInSample', () => {
  it('times the first clear at or after the speech began, and takes the detection time off', () => {
    const sample = bargeInSample('call-a', 1000, [500, 1420.5, 1900], 400, { decisionFrameMs: 20_412, clearedAtMs: 20_415.5 });
    expect(sample).toEqual({ callId: 'call-a', latencyMs: 420.5, overheadMs: 20.5, decisionToClearMs: 3.5 });
  });

  it('has no sample when no clear followed the speech, and no platform share when the decision frame is unknown', () => {
    expect(bargeInSample('call-a', 1000, [500], 400)).toBeUndefined();
    expect(bargeInSample('call-a', 1000, [1380], 400, { decisionFrameMs: null, clearedAtMs: 20_415 })).toEqual({
      callId: 'call-a',
      latencyMs: 380,
      overheadMs: -20,
      decisionToClearMs: null,
    });
  });
});

describe('EngineDelayLog', () => {
  it('numbers questions per call and finds all three delays of an answer by (call, question)', () => {
    const log = new EngineDelayLog();
    expect(log.nextQuestion('a')).toBe(1);
    expect(log.nextQuestion('b')).toBe(1);
    expect(log.nextQuestion('a')).toBe(2);
    log.asrFinished('a', 2, 40.2);
    expect(log.delaysFor('a', 2)).toBeUndefined();
    log.llmFirstToken('a', 2, 120.4);
    log.ttsFirstByte('a', 60.1);
    // The answer's later syntheses (its next sentences) are not its first byte.
    log.ttsFirstByte('a', 99);
    expect(log.delaysFor('a', 2)).toEqual({ asrMs: 40.2, llmFirstTokenMs: 120.4, ttsFirstByteMs: 60.1 });
    expect(log.delaysFor('b', 1)).toBeUndefined();
  });

  it('gives a synthesis to no answer when no answer is waiting for audio', () => {
    const log = new EngineDelayLog();
    log.ttsFirstByte('a', 60);
    log.asrFinished('a', 1, 40);
    log.llmFirstToken('a', 1, 120);
    expect(log.delaysFor('a', 1)).toBeUndefined();
  });

  it('reads back the question number it wrote, and nothing from other text', () => {
    expect(questionNumberIn(questionText(17))).toBe(17);
    expect(questionNumberIn('What time do you open?')).toBeUndefined();
  });
});
