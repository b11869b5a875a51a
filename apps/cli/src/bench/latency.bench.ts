/**
 * `npm run bench:latency [-- --calls N] [-- --turns N] [-- --check] [-- --workers N] [-- --batch-delay-ms N]`
 *
 * Voice-to-voice latency through the real media path (MediaStreamConnection on a local WebSocket
 * server, the pipeline agent, the real Silero VAD through the inference runtime) with fake
 * ASR/LLM/TTS engines of fixed, scripted delays, against SimulatedTwilioCall callers in this same
 * process (real-time 20 ms frames, real-time playback, mark echoes, `clear`):
 *  1. one call alone, then N calls at once (default 100, started over 2 s), each asking `--turns`
 *     questions (default 2) and then barging in on an answer;
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
import { loadCallerFixtures } from './latency/caller-fixtures';
import { formatEndOfTurnTable, runEndOfTurnReport } from './latency/end-of-turn-report';
import { DEFAULT_CALLS, DEFAULT_TURNS, ENGINE_DELAYS, RAMP_MS } from './latency/latency-bench-settings';
import { formatGcLine, formatLatencyTable, formatRunLine, formatVadLine, latencyBenchJson, latencyTargets } from './latency/latency-report';
import { runLoad, type LoadRunResult } from './latency/load-run';
import { MediaServerRig } from './latency/media-server-rig';

const MAX_CALLS = 1000;
const MAX_TURNS = 20;
const MAX_WORKERS = 16;
/** The server's own bound on INFERENCE_BATCH_DELAY_MS. */
const MAX_BATCH_DELAY_MS = 50;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const calls = integerFlag(args, '--calls', DEFAULT_CALLS, MAX_CALLS);
  const turns = integerFlag(args, '--turns', DEFAULT_TURNS, MAX_TURNS);
  const workersFlag = args.includes('--workers') ? integerFlag(args, '--workers', 1, MAX_WORKERS) : undefined;
  const batchDelayFlag = args.includes('--batch-delay-ms') ? numberFlag(args, '--batch-delay-ms', MAX_BATCH_DELAY_MS) : undefined;
  const startedAt = Date.now();
  const loadBefore = loadavg()[0]!;
  console.log(`bench:latency: ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}, load average ${loadBefore.toFixed(2)}`);
  console.log(
    `Real media path + pipeline agent + Silero VAD (CPU; inference workers ${workersFlag ?? 'default (min(2, cores))'}, batch window ${batchDelayFlag ?? 'default (2)'} ms); fake engines scripted at ASR ${ENGINE_DELAYS.asrMs} ms, LLM first token ${ENGINE_DELAYS.llmFirstTokenMs} ms, TTS first byte ${ENGINE_DELAYS.ttsFirstByteMs} ms.`,
  );
  console.log(`Callers in this process: 1 call, then ${calls} calls started over ${RAMP_MS / 1000} s; each asks ${turns} question${turns === 1 ? '' : 's'}, then barges in on an answer.\n`);

  const fixtures = loadCallerFixtures();
  const pipeline = await startBenchPipeline({ workers: workersFlag, batchMaxDelayMs: batchDelayFlag });
  const runs: LoadRunResult[] = [];
  try {
    const rig = await MediaServerRig.start(pipeline.engine);
    try {
      runs.push(await runLoad(rig, pipeline, fixtures, 1, turns));
      if (calls > 1) runs.push(await runLoad(rig, pipeline, fixtures, calls, turns));
    } finally {
      await rig.close();
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
  const context = { inferenceWorkers: workersFlag ?? 'default', batchMaxDelayMs: batchDelayFlag ?? 'default', node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, loadAverage: [loadBefore, loadAfter].map((value) => Number(value.toFixed(2))), elapsedMs };
  console.log(`BENCH_JSON ${JSON.stringify(latencyBenchJson(runs, endOfTurn, targets, context))}`);
  return check && targets.some((target) => !target.pass) ? 1 : 0;
}

function integerFlag(args: readonly string[], name: string, fallback: number, max: number): number {
  const index = args.indexOf(name);
  if (index < 0) return fallback;
  const raw = args[index + 1];
  const value = Number(raw);
  if (raw === undefined || !Number.isInteger(value) || value < 1 || value > max) throw new UsageError(`${name} must be a whole number from 1 to ${max}, got ${raw ?? 'nothing'}`);
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
