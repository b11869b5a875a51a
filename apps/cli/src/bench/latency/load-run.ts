/**
 * N scripted calls at once (started RAMP_MS apart in total), the server on this thread and the
 * callers on caller threads of this same process, then every reply and barge-in joined into
 * figures. The server thread's event-loop delay and GC, the process's CPU time (every thread) and
 * the caller threads' own GC and event loop during the run are kept beside them: on a 2-core
 * machine they are what turns load into latency.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { BenchPipeline } from './bench-pipeline';
import type { CallerThreadFigures } from './caller-protocol';
import type { CallerThreads, ScriptedCallOutcome } from './caller-thread';
import { GcPauses, pausedWithin, type Pause } from './gc-pauses';
import { BARGE_IN_DETECTION_MS, ENGINE_DELAYS, RAMP_MS } from './latency-bench-settings';
import { distribution, type Distribution } from './latency-stats';
import type { MediaServerRig } from './media-server-rig';
import { bargeInSample, breakDownCall, type BargeInSample, type BargeInTimes, type OverheadStages, type TurnBreakdown } from './turn-breakdown';
import type { VadTimingFigures } from './vad-timings';

export interface LoadRunResult {
  calls: number;
  turnsPerCall: number;
  /** Replies expected with a full latency record: the questions plus the one after the barge-in. */
  expectedReplies: number;
  turns: TurnBreakdown[];
  bargeIns: BargeInSample[];
  /** Why a call, a reply or a barge-in has no figures (empty when everything was measured). */
  problems: string[];
  figures: LoadFigures;
  elapsedMs: number;
  /** CPU seconds this process used per wall second, every thread (2.0 = both cores of a 2-core machine). */
  cpuCoresUsed: number;
  /** The server's (main) thread. */
  eventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number };
  vad: VadTimingFigures;
  /** The server's (main) thread: a caller thread's GC pauses only that thread. */
  gc: GcFigures;
  /** Each caller thread's own GC and event loop (empty if a thread could not report). */
  callerThreads: CallerThreadFigures[];
}

/** GC pauses during the run, and the replies whose VAD stage one of them fell into. */
export interface GcFigures {
  pauses: Distribution;
  totalMs: number;
  /** Replies whose decision frame -> end of turn window overlapped a pause. */
  repliesHit: number;
  overheadHit: Distribution;
  overheadNotHit: Distribution;
}

export interface LoadFigures {
  voiceToVoice: Distribution;
  endOfTurnWait: Distribution;
  engineDelays: Distribution;
  engineDelaysNominal: Distribution;
  asr: Distribution;
  llmFirstToken: Distribution;
  ttsFirstByte: Distribution;
  platformOverhead: Distribution;
  platformOverheadNominal: Distribution;
  stages: Record<keyof OverheadStages, Distribution>;
  bargeInLatency: Distribution;
  bargeInOverhead: Distribution;
  bargeInSpeechToDecision: Distribution;
  bargeInDecisionToClear: Distribution;
}

export async function runLoad(rig: MediaServerRig, pipeline: BenchPipeline, callers: CallerThreads, calls: number, turnsPerCall: number): Promise<LoadRunResult> {
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  const cpuBefore = process.cpuUsage();
  const vadMark = pipeline.vadTimings.mark();
  const gcPauses = new GcPauses();
  const startedAt = performance.now();
  loopDelay.enable();
  gcPauses.start();
  callers.measureStart();
  const outcomes = await Promise.all(
    Array.from({ length: calls }, async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, (index * RAMP_MS) / calls));
      return callers.runCall(rig, index, turnsPerCall);
    }),
  );
  loopDelay.disable();
  gcPauses.stop();
  const elapsedMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  const callerThreads = await callers.measureStop();
  const measured = analyse(outcomes, pipeline, turnsPerCall);
  return {
    calls,
    turnsPerCall,
    expectedReplies: calls * (turnsPerCall + 1),
    ...measured,
    elapsedMs,
    cpuCoresUsed: (cpu.user + cpu.system) / 1000 / elapsedMs,
    eventLoopDelay: { p50Ms: loopDelay.percentile(50) / 1e6, p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 },
    vad: pipeline.vadTimings.since(vadMark),
    gc: gcFigures(gcPauses.pauses, measured.turns, outcomes),
    callerThreads,
  };
}

function analyse(outcomes: readonly ScriptedCallOutcome[], pipeline: BenchPipeline, turnsPerCall: number): Pick<LoadRunResult, 'turns' | 'bargeIns' | 'problems' | 'figures'> {
  const turns: TurnBreakdown[] = [];
  const bargeIns: BargeInSample[] = [];
  const problems: string[] = [];
  for (const outcome of outcomes) {
    const { callId, ledger } = outcome;
    if (outcome.error) problems.push(`call ${callId}: ${outcome.error}`);
    if (outcome.endReason !== 'stream_stopped') problems.push(`call ${callId}: ended ${outcome.endReason ?? 'without being finalised'} (expected stream_stopped)`);
    const recorder = ledger.recorder;
    const split = breakDownCall(
      { callId, latencies: recorder.latencies, transcript: recorder.turns, events: recorder.events },
      (question) => pipeline.delays.delaysFor(callId, question),
      ENGINE_DELAYS,
    );
    turns.push(...split.turns);
    problems.push(...split.unmatched);
    if (recorder.latencies.length !== turnsPerCall + 1) problems.push(`call ${callId}: ${recorder.latencies.length} replies recorded, expected ${turnsPerCall + 1}`);
    const bargeInEvent = recorder.events.find((event) => event.type === 'barge_in' && event.payload.cause === 'speech')?.payload as BargeInTimes | undefined;
    const sample =
      outcome.bargeInSpeechSentAtMs === undefined ? undefined : bargeInSample(callId, outcome.bargeInSpeechSentAtMs, ledger.clearsSentAtMs, BARGE_IN_DETECTION_MS, bargeInEvent);
    if (sample) bargeIns.push(sample);
    else problems.push(`call ${callId}: no barge-in measured (${outcome.bargeInSpeechSentAtMs === undefined ? 'utterance not sent' : 'no clear sent'})`);
  }
  return { turns, bargeIns, problems, figures: figuresOf(turns, bargeIns) };
}

function gcFigures(pauses: readonly Pause[], turns: readonly TurnBreakdown[], outcomes: readonly ScriptedCallOutcome[]): GcFigures {
  const offsets = new Map(outcomes.map((outcome) => [outcome.callId, outcome.ledger.recorder.callClockToPerfMs]));
  const hit: number[] = [];
  const notHit: number[] = [];
  for (const turn of turns) {
    const offset = offsets.get(turn.callId);
    if (offset === undefined) continue;
    const pausedMs = pausedWithin(pauses, turn.decisionFrameMs + offset, turn.endOfTurnMs + offset);
    (pausedMs > 0 ? hit : notHit).push(turn.platformOverheadMs);
  }
  return {
    pauses: distribution(pauses.map((pause) => pause.durationMs)),
    totalMs: pauses.reduce((sum, pause) => sum + pause.durationMs, 0),
    repliesHit: hit.length,
    overheadHit: distribution(hit),
    overheadNotHit: distribution(notHit),
  };
}

export function figuresOf(turns: readonly TurnBreakdown[], bargeIns: readonly BargeInSample[]): LoadFigures {
  const of = (pick: (turn: TurnBreakdown) => number): Distribution => distribution(turns.map(pick));
  return {
    voiceToVoice: of((turn) => turn.voiceToVoiceMs),
    endOfTurnWait: of((turn) => turn.endOfTurnWaitMs),
    engineDelays: of((turn) => turn.engineDelaysMs),
    engineDelaysNominal: of((turn) => turn.engineDelaysNominalMs),
    asr: of((turn) => turn.engines.asrMs),
    llmFirstToken: of((turn) => turn.engines.llmFirstTokenMs),
    ttsFirstByte: of((turn) => turn.engines.ttsFirstByteMs),
    platformOverhead: of((turn) => turn.platformOverheadMs),
    platformOverheadNominal: of((turn) => turn.platformOverheadNominalMs),
    stages: {
      vadAndTurnMs: of((turn) => turn.stages.vadAndTurnMs),
      asrHandOffMs: of((turn) => turn.stages.asrHandOffMs),
      llmHandOffMs: of((turn) => turn.stages.llmHandOffMs),
      ttsHandOffMs: of((turn) => turn.stages.ttsHandOffMs),
      playoutMs: of((turn) => turn.stages.playoutMs),
    },
    bargeInLatency: distribution(bargeIns.map((sample) => sample.latencyMs)),
    bargeInOverhead: distribution(bargeIns.map((sample) => sample.overheadMs)),
    bargeInSpeechToDecision: distribution(bargeIns.flatMap((sample) => (sample.decisionToClearMs === null ? [] : [sample.latencyMs - sample.decisionToClearMs]))),
    bargeInDecisionToClear: distribution(bargeIns.flatMap((sample) => (sample.decisionToClearMs === null ? [] : [sample.decisionToClearMs]))),
  };
}
