/** The latency bench's printed table, its targets and its JSON line. */
import type { EndOfTurnRow } from './end-of-turn-report';
import { BARGE_IN_DETECTION_MS, ENGINE_DELAYS, INTERRUPTION_MIN_SPEECH_MS, TARGETS, TURN_MIN_SILENCE_MS } from './latency-bench-settings';
import { allMeasured, atMost, type Distribution, type Target } from './latency-stats';
import type { LoadFigures, LoadRunResult } from './load-run';

interface Row {
  label: string;
  pick: (figures: LoadFigures) => Distribution;
}

const ROWS: readonly Row[] = [
  { label: 'voice-to-voice (last speech frame in -> first reply frame out)', pick: (f) => f.voiceToVoice },
  { label: `  end-of-turn wait (VAD, minSilenceMs ${TURN_MIN_SILENCE_MS})`, pick: (f) => f.endOfTurnWait },
  { label: '  engine delays, actual (ASR + LLM 1st token + TTS 1st byte)', pick: (f) => f.engineDelays },
  { label: `    ASR final (scripted ${ENGINE_DELAYS.asrMs})`, pick: (f) => f.asr },
  { label: `    LLM first token (scripted ${ENGINE_DELAYS.llmFirstTokenMs})`, pick: (f) => f.llmFirstToken },
  { label: `    TTS first byte (scripted ${ENGINE_DELAYS.ttsFirstByteMs})`, pick: (f) => f.ttsFirstByte },
  { label: '  platform overhead (the rest)  [target]', pick: (f) => f.platformOverhead },
  { label: '    VAD inference + turn detection', pick: (f) => f.stages.vadAndTurnMs },
  { label: '    end of turn -> transcript, net of ASR', pick: (f) => f.stages.asrHandOffMs },
  { label: '    transcript -> first token, net of LLM', pick: (f) => f.stages.llmHandOffMs },
  { label: '    first token -> first audio, net of TTS', pick: (f) => f.stages.ttsHandOffMs },
  { label: '    first audio -> first frame sent', pick: (f) => f.stages.playoutMs },
  { label: '  platform overhead vs scripted delays (timer lateness in)', pick: (f) => f.platformOverheadNominal },
  { label: 'barge-in: first speech frame sent -> clear sent', pick: (f) => f.bargeInLatency },
  { label: `  minus detection (minSpeechMs ${INTERRUPTION_MIN_SPEECH_MS} on 32 ms VAD chunks = ${BARGE_IN_DETECTION_MS})  [target]`, pick: (f) => f.bargeInOverhead },
  { label: '  speech frame sent -> decision frame in (audio: 32 ms VAD chunks)', pick: (f) => f.bargeInSpeechToDecision },
  { label: '  decision frame in -> clear sent (VAD inference + send)', pick: (f) => f.bargeInDecisionToClear },
];

/** One column group (p50/p95/p99/max, and n) per run. */
export function formatLatencyTable(runs: readonly LoadRunResult[]): string {
  const header = ['figure (ms)', ...runs.flatMap((run) => [`${callsLabel(run.calls)}: n`, 'p50', 'p95', 'p99', 'max'])];
  const body = ROWS.map((row) => [
    row.label,
    ...runs.flatMap((run) => {
      const d = row.pick(run.figures);
      return [String(d.count), ms(d.p50), ms(d.p95), ms(d.p99), ms(d.max)];
    }),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

export function formatRunLine(run: LoadRunResult): string {
  const loop = run.eventLoopDelay;
  return (
    `${callsLabel(run.calls)} x ${run.turnsPerCall} question${run.turnsPerCall === 1 ? '' : 's'} + barge-in: ${run.turns.length}/${run.expectedReplies} replies, ${run.bargeIns.length}/${run.calls} barge-ins measured; ` +
    `${(run.elapsedMs / 1000).toFixed(1)} s, ${run.cpuCoresUsed.toFixed(2)} cores of CPU (whole process: server, inference and caller threads), server event-loop delay p50 ${loop.p50Ms.toFixed(2)} / p99 ${loop.p99Ms.toFixed(2)} / max ${loop.maxMs.toFixed(1)} ms`
  );
}

/** Where the VAD stage's time goes: the runtime round trip per push, and the batches it ran. */
export function formatVadLine(run: LoadRunResult): string {
  const { pushToFrames, batchGather, batchRun, batchRows, batches } = run.vad;
  const pair = (d: Distribution): string => `${ms(d.p50)} / ${ms(d.p99)}`;
  return (
    `${callsLabel(run.calls)}: VAD push -> frames p50/p99 ${pair(pushToFrames)} ms (max ${ms(pushToFrames.max)}); ` +
    `${batches} batches: gather ${pair(batchGather)} ms, run ${pair(batchRun)} ms, rows mean ${batchRows.mean.toFixed(1)} (max ${batchRows.max})`
  );
}

/** GC pauses of the server's thread in the run and the replies they fell into, then the caller threads' own. */
export function formatGcLine(run: LoadRunResult): string {
  const { pauses, totalMs, repliesHit, overheadHit, overheadNotHit } = run.gc;
  return (
    `${callsLabel(run.calls)}: server thread GC ${pauses.count} pauses, ${totalMs.toFixed(0)} ms in all, p99 ${ms(pauses.p99)} / max ${ms(pauses.max)} ms; ` +
    `${repliesHit}/${run.turns.length} replies had one in their VAD stage (overhead p50/p99 ${ms(overheadHit.p50)} / ${ms(overheadHit.p99)} ms; the others ${ms(overheadNotHit.p50)} / ${ms(overheadNotHit.p99)} ms)`
  );
}

/** The caller threads' GC and event loop: the callers' work, which no longer stalls the server's loop. */
export function formatCallerThreadsLine(run: LoadRunResult): string {
  const threads = run.callerThreads;
  if (threads.length === 0) return `${callsLabel(run.calls)}: caller threads did not report their figures`;
  const pauses = threads.reduce((sum, thread) => sum + thread.gcPauses, 0);
  const totalMs = threads.reduce((sum, thread) => sum + thread.gcTotalMs, 0);
  const maxMs = Math.max(...threads.map((thread) => thread.gcMaxMs));
  const loopMaxMs = Math.max(...threads.map((thread) => thread.eventLoopMaxMs));
  const loopP99Ms = Math.max(...threads.map((thread) => thread.eventLoopP99Ms));
  return (
    `${callsLabel(run.calls)}: caller thread${threads.length === 1 ? '' : 's'} (${threads.length}) GC ${pauses} pauses, ${totalMs.toFixed(0)} ms in all, max ${ms(maxMs)} ms; ` +
    `event-loop delay p99 ${loopP99Ms.toFixed(2)} / max ${loopMaxMs.toFixed(1)} ms`
  );
}

/** The targets, checked on the loaded run. */
export function latencyTargets(load: LoadRunResult): Target[] {
  const label = callsLabel(load.calls);
  return [
    atMost(`platform overhead p50 at ${label}`, load.figures.platformOverhead.p50, TARGETS.platformOverheadP50Ms),
    atMost(`platform overhead p99 at ${label}`, load.figures.platformOverhead.p99, TARGETS.platformOverheadP99Ms),
    atMost(`barge-in p99 minus detection (${BARGE_IN_DETECTION_MS} ms) at ${label}`, load.figures.bargeInOverhead.p99, TARGETS.bargeInOverheadP99Ms),
    allMeasured(`replies measured at ${label}`, load.turns.length, load.expectedReplies),
    allMeasured(`barge-ins measured at ${label}`, load.bargeIns.length, load.calls),
  ];
}

export function latencyBenchJson(runs: readonly LoadRunResult[], endOfTurn: readonly EndOfTurnRow[], targets: readonly Target[], context: Record<string, unknown>): object {
  return {
    bench: 'latency',
    ...context,
    engineDelaysScriptedMs: ENGINE_DELAYS,
    turnMinSilenceMs: TURN_MIN_SILENCE_MS,
    interruptionMinSpeechMs: INTERRUPTION_MIN_SPEECH_MS,
    bargeInDetectionMs: BARGE_IN_DETECTION_MS,
    runs: runs.map((run) => ({
      calls: run.calls,
      questionsPerCall: run.turnsPerCall,
      repliesMeasured: run.turns.length,
      repliesExpected: run.expectedReplies,
      bargeInsMeasured: run.bargeIns.length,
      elapsedMs: Math.round(run.elapsedMs),
      cpuCoresUsed: round(run.cpuCoresUsed),
      eventLoopDelayMs: { p50: round(run.eventLoopDelay.p50Ms), p99: round(run.eventLoopDelay.p99Ms), max: round(run.eventLoopDelay.maxMs) },
      figuresMs: roundFigures(run.figures),
      vadDiagnosticsMs: {
        pushToFrames: roundDistribution(run.vad.pushToFrames),
        batchGather: roundDistribution(run.vad.batchGather),
        batchRun: roundDistribution(run.vad.batchRun),
        batchRows: roundDistribution(run.vad.batchRows),
        batches: run.vad.batches,
      },
      gcDiagnosticsMs: {
        pauses: roundDistribution(run.gc.pauses),
        totalMs: round(run.gc.totalMs),
        repliesWithPauseInVadStage: run.gc.repliesHit,
        overheadWithPause: roundDistribution(run.gc.overheadHit),
        overheadWithoutPause: roundDistribution(run.gc.overheadNotHit),
      },
      callerThreadDiagnosticsMs: run.callerThreads.map((thread) => ({
        gcPauses: thread.gcPauses,
        gcTotalMs: round(thread.gcTotalMs),
        gcMaxMs: round(thread.gcMaxMs),
        eventLoopDelayP99: round(thread.eventLoopP99Ms),
        eventLoopDelayMax: round(thread.eventLoopMaxMs),
      })),
      problems: run.problems.slice(0, 20),
      problemCount: run.problems.length,
    })),
    endOfTurn: endOfTurn.map((row) => ({
      minSilenceMs: row.setting.minSilenceMs,
      fixtures: row.fixtures,
      turns: row.turns,
      falseCutOffs: row.falseCutOffs,
      missed: row.missed,
      eotWaitMsMean: row.eotWaitMsMean,
      eotWaitMsMax: row.eotWaitMsMax,
      heardWaitMsMean: row.heardWaitMsMean,
    })),
    targets: targets.map((target) => ({ ...target, value: round(target.value) })),
  };
}

function roundDistribution(x: Distribution): Record<string, number> {
  return { n: x.count, p50: round(x.p50), p95: round(x.p95), p99: round(x.p99), max: round(x.max), mean: round(x.mean) };
}

function roundFigures(figures: LoadFigures): Record<string, unknown> {
  const d = roundDistribution;
  const { stages, ...rest } = figures;
  return {
    ...Object.fromEntries(Object.entries(rest).map(([name, value]) => [name, d(value)])),
    overheadStages: Object.fromEntries(Object.entries(stages).map(([name, value]) => [name, d(value)])),
  };
}

function callsLabel(calls: number): string {
  return calls === 1 ? '1 call' : `${calls} calls`;
}

function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : '-';
}

function round(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 100) / 100 : value;
}
