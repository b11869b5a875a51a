/**
 * `npm run bench:latency [-- --calls N] [-- --turns N] [-- --check] [-- --workers N] [-- --batch-delay-ms N] [-- --caller-threads N] [-- --caller-nice N]`
 *
 * Voice-to-voice latency through the real media path (a CallRuntime over the Twilio transport on a local WebSocket
 * server, the pipeline agent, the real Silero VAD through the inference runtime) with fake
 * ASR/LLM/TTS engines of fixed, scripted delays, against SimulatedTwilioCall callers (real-time
 * 20 ms frames, real-time playback, mark echoes, `clear`). The callers run in a worker thread of
 * this same process (--caller-threads, default 1): their CPU is still on the machine's cores, but
 * their GC and event-loop work no longer stall the server's thread, as Twilio's would not.
 * --caller-nice N (Linux, 0-19, default 10; 0 elsewhere) lowers the caller threads' CPU priority, so that on a
 * busy machine the server's threads get the cores first (the callers still run on them):
 *  1. one call alone, then N calls at once (default 100, started over 2 s), each asking `--turns`
 *     questions (default 3) and then barging in on an answer;
 *  2. per reply: voice-to-voice = end-of-turn wait + engine delays (as the fakes measured them) +
 *     platform overhead; targets at N calls: overhead p50 <= 3 ms, p99 <= 10 ms;
 *  3. per barge-in: first frame of caller speech sent -> `clear` sent, minus the detection time
 *     (interruptions.minSpeechMs rounded up to the VAD's 32 ms chunks: 416 ms); target p99 <= 40 ms;
 *  4. end-of-turn wait vs false cut-offs with the VAD alone at three minSilenceMs settings.
 * Prints tables, then one `BENCH_JSON {...}` line. --check exits 1 when a target is missed.
 * --workers and --batch-delay-ms set the inference runtime's worker threads and batch gathering
 * window (INFERENCE_WORKERS, INFERENCE_BATCH_DELAY_MS); by default the server's defaults
 * (min(2, cores) workers, 2 ms, used only while every worker is busy).
 */
import { cpus, loadavg } from 'node:os';
import { startBenchPipeline } from './latency/bench-pipeline';
import { CallerThreads, MAX_NICENESS } from './latency/caller-thread';
import { formatEndOfTurnTable, runEndOfTurnReport } from './latency/end-of-turn-report';
import { DEFAULT_CALLS, DEFAULT_TURNS, ENGINE_DELAYS, RAMP_MS } from './latency/latency-bench-settings';
import { formatCallerThreadsLine, formatGcLine, formatLatencyTable, formatRunLine, formatVadLine, latencyBenchJson, latencyTargets } from './latency/latency-report';
import { runLoad, type LoadRunResult } from './latency/load-run';
import { MediaServerRig } from './latency/media-server-rig';

const MAX_CALLS = 1000;
/**
 * The simulated callers stand in for Twilio, which never competes with the server for its CPU.
 * They still run on the same two cores (their load is included), at a lower scheduling priority so
 * that the load generator's own stalls are not charged to the platform; `--caller-nice 0` measures
 * the harsher case where they compete as equals.
 */
const DEFAULT_CALLER_NICENESS = 10;
const MAX_TURNS = 20;
const MAX_WORKERS = 16;
const MAX_CALLER_THREADS = 8;
/** The server's own bound on INFERENCE_BATCH_DELAY_MS. */
const MAX_BATCH_DELAY_MS = 50;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const calls = integerFlag(args, '--calls', DEFAULT_CALLS, MAX_CALLS);
  const turns = integerFlag(args, '--turns', DEFAULT_TURNS, MAX_TURNS);
  const workersFlag = args.includes('--workers') ? integerFlag(args, '--workers', 1, MAX_WORKERS) : undefined;
  const batchDelayFlag = args.includes('--batch-delay-ms') ? numberFlag(args, '--batch-delay-ms', MAX_BATCH_DELAY_MS) : undefined;
  const callerThreadCount = integerFlag(args, '--caller-threads', 1, MAX_CALLER_THREADS);
  const callerNiceness = args.includes('--caller-nice') ? integerFlag(args, '--caller-nice', 0, MAX_NICENESS, DEFAULT_CALLER_NICENESS) : process.platform === 'linux' ? DEFAULT_CALLER_NICENESS : 0;
  if (callerNiceness > 0 && process.platform !== 'linux') throw new UsageError(`--caller-nice needs Linux, where a thread's priority is its own (this is ${process.platform})`);
  const startedAt = Date.now();
  const loadBefore = loadavg()[0]!;
  console.log(`bench:latency: ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}, load average ${loadBefore.toFixed(2)}`);
  console.log(
    `Real media path + pipeline agent + Silero VAD (CPU; inference workers ${workersFlag ?? 'default (min(2, cores))'}, batch window ${batchDelayFlag ?? 'default (2)'} ms); fake engines scripted at ASR ${ENGINE_DELAYS.asrMs} ms, LLM first token ${ENGINE_DELAYS.llmFirstTokenMs} ms, TTS first byte ${ENGINE_DELAYS.ttsFirstByteMs} ms.`,
  );
  console.log(`Callers in this process: 1 call, then ${calls} calls started over ${RAMP_MS / 1000} s; each asks ${turns} question${turns === 1 ? '' : 's'}, then barges in on an answer.`);

  const pipeline = await startBenchPipeline({ workers: workersFlag, batchMaxDelayMs: batchDelayFlag });
  const runs: LoadRunResult[] = [];
  let callerClocks: CallerThreads['clocks'] = [];
  try {
    const callers = await CallerThreads.start(callerThreadCount, { niceness: callerNiceness });
    try {
      callerClocks = callers.clocks;
      console.log(callerThreadsLine(callers.count, callers.niceness, callerClocks));
      const rig = await MediaServerRig.start(pipeline.engine);
      try {
        runs.push(await runLoad(rig, pipeline, callers, 1, turns));
        if (calls > 1) runs.push(await runLoad(rig, pipeline, callers, calls, turns));
      } finally {
        await rig.close();
      }
    } finally {
      await callers.close();
    }
  } finally {
    await pipeline.close();
  }
  const endOfTurn = await runEndOfTurnReport();

  const load = runs[runs.length - 1]!;
  console.log('Per reply (ms). voice-to-voice = end-of-turn wait + engine delays + platform overhead, exactly; the overhead is split at the session\'s milestones.');
  console.log(formatLatencyTable(runs));
  console.log('');
  for (const run of runs) console.log(formatRunLine(run));
  for (const run of runs) console.log(formatVadLine(run));
  for (const run of runs) console.log(formatGcLine(run));
  for (const run of runs) console.log(formatCallerThreadsLine(run));
  for (const run of runs) {
    if (run.problems.length === 0) continue;
    console.log(`\nNot measured at ${run.calls} call(s) (${run.problems.length}):`);
    for (const problem of run.problems.slice(0, 10)) console.log(`  ${problem}`);
  }

  console.log('\nEnd-of-turn wait vs false cut-offs, VAD alone (Silero v5 + TurnDetector), each fixture one utterance + 1.5 s of silence:');
  console.log(formatEndOfTurnTable(endOfTurn));

  const targets = latencyTargets(load);
  console.log('\nTargets:');
  for (const target of targets) {
    console.log(`  ${target.pass ? 'PASS' : 'FAIL'}  ${target.name}: ${Number.isInteger(target.value) ? target.value : target.value.toFixed(2)} (target ${target.target})`);
  }
  const elapsedMs = Date.now() - startedAt;
  const loadAfter = loadavg()[0]!;
  console.log(`\nBench took ${(elapsedMs / 1000).toFixed(1)} s; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (a shared machine inflates every figure).`);
  const context = {
    inferenceWorkers: workersFlag ?? 'default',
    batchMaxDelayMs: batchDelayFlag ?? 'default',
    callerThreads: callerThreadCount,
    callerNiceness,
    callerClockOffsetsMs: callerClocks.map((clock) => ({ offset: Number(clock.offsetMs.toFixed(3)), monotonicDisagreement: Number(clock.disagreementMs.toFixed(3)) })),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    loadAverage: [loadBefore, loadAfter].map((value) => Number(value.toFixed(2))),
    elapsedMs,
  };
  console.log(`BENCH_JSON ${JSON.stringify(latencyBenchJson(runs, endOfTurn, targets, context))}`);
  return check && targets.some((target) => !target.pass) ? 1 : 0;
}

/**
 * Says where the callers run and how their clock maps onto main's (the barge-in figure subtracts a
 * caller-thread time from a main-thread one).
 */
function callerThreadsLine(count: number, niceness: number, clocks: CallerThreads['clocks']): string {
  const offsets = clocks.map((clock) => `${clock.offsetMs >= 0 ? '+' : ''}${clock.offsetMs.toFixed(3)} ms`).join(', ');
  const worst = Math.max(...clocks.map((clock) => clock.disagreementMs));
  const priority = niceness === 0 ? 'same CPU priority as the server' : `CPU priority lowered to nice ${niceness}`;
  return (
    `Callers run in ${count} worker thread${count === 1 ? '' : 's'} (not on the server's event loop; same process, same cores, ${priority}); ` +
    `caller clock -> server clock ${offsets} (performance.timeOrigin difference; the monotonic clock agrees within ${worst.toFixed(3)} ms).\n`
  );
}

function integerFlag(args: readonly string[], name: string, fallback: number, max: number, min = 1): number {
  const index = args.indexOf(name);
  if (index < 0) return fallback;
  const raw = args[index + 1];
  const value = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${raw ?? 'nothing'}`);
  }
  return value;
}

function numberFlag(args: readonly string[], name: string, max: number): number {
  const raw = args[args.indexOf(name) + 1];
  const value = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > max) throw new UsageError(`${name} must be a number from 0 to ${max}, got ${raw ?? 'nothing'}`);
  return value;
}

class UsageError extends Error {}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`bench:latency: ${error.message}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(2);
  },
);
