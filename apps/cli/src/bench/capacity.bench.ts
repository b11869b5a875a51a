/**
 * `npm run bench:capacity`: admission by inference capacity at its refusal point, measured from
 * outside the server.
 *
 * The built server runs as its own process (one server process, its default inference workers) with
 * `whisper-base.en` pulled into its models folder (stand-in weights at the real model's size, so its
 * compute is the real one) and a pipeline agent that transcribes locally (LLM and TTS: the load
 * bench's OpenAI-compatible fakes). One call first (the reply latency to keep, and what a call costs
 * the workers), then `--calls N` callers phone within `--arrival-window-s` (default 16 within 10 s),
 * far more than the workers carry, each speaking three sentences as in bench:load. Twice, in one invocation: with admission by capacity at
 * INFERENCE_MAX_UTILISATION (`--max-utilisation`, default the server's 0.8), and as the reference,
 * with admission planned far past the device (4), which is every call admitted, as before issue 17.
 * It prints calls admitted and refused, and the admitted calls' reply latency against one call's.
 * `--check` applies the targets: refusals happen, every admitted utterance is answered, the admitted
 * calls' reply p50 stays within half again of one call's, and their p95 well under the reference's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distribution } from './latency/latency-stats';
import { installWhisperStandIn } from './capacity/whisper-stand-in-install';
import { startBenchEnginesProcess } from './load/bench-engines-process';
import { benchApi, benchLine, benchServerEnv, newBenchServerIdentity } from './load/bench-server';
import { benchAgentConfig } from './load/load-settings';
import { loadUtterances, runLevel, type LevelOutcome } from './load/load-driver';
import { ServerProcess } from './load/server-process';
import type { ScriptedUtterance } from './load/scaled-call';

const TARGETS_MISSED_EXIT_CODE = 3;
/** The reference: admission planned at 4x the workers, so nothing is refused on any machine. */
const NO_ADMISSION_UTILISATION = 4;
/**
 * What admission promises at INFERENCE_MAX_UTILISATION 0.8: the typical admitted caller waits at
 * most 1.6x as long as on an idle server (turns that meet queue for a worker now and then; 1.0-1.43x
 * in seven runs here, against 1.7-2.7x with every call admitted),
 * and once the arrivals are over the tail stays well under what admitting every caller gives,
 * measured in the same invocation. On this CPU a Whisper encode holds a worker ~1.5 s, so a turn
 * that queues waits about that long. Each call's first turn comes with its arrival, so during a
 * burst those first turns meet: admission plans with the average cost of a call and does not bound
 * that transient (its p95 is printed, not gated). A device with millisecond runs (a GPU) queues for
 * milliseconds; a lower INFERENCE_MAX_UTILISATION trades calls for tail latency.
 */
const P50_FACTOR = 1.6;
const P95_SHARE_OF_REFERENCE = 0.75;

interface Options {
  calls: number;
  /** The callers phone within this long, evenly spaced (a busy line's calls, not one instant). */
  arrivalWindowS: number;
  maxUtilisation: number | undefined;
  size: 'realistic' | 'small';
  check: boolean;
}

interface RunReport {
  label: string;
  maxUtilisation: string;
  single: { replyP50: number | null; replyP95: number | null };
  /** The single call's reply latencies (the targets pool both runs': three replies alone are noisy). */
  singleRepliesMs: number[];
  /** What GET /v1/organization said after the single call (the cost it measured). */
  capacityAfterSingle: Record<string, unknown>;
  offered: number;
  admitted: number;
  refused: number;
  failed: number;
  utterances: number;
  answered: number;
  reply: { p50: number | null; p95: number | null; max: number | null };
  /** Admitted calls' reply p95 of their 1st, 2nd, 3rd utterance. */
  replyP95ByUtterance: Array<number | null>;
  /** Their 2nd and 3rd utterances: once the arrivals are over (each call's 1st turn comes with its arrival). */
  steadyReply: { p50: number | null; p95: number | null };
  refusedMessage: string | null;
  errors: string[];
}

function parseOptions(argv: string[]): Options {
  const options: Options = { calls: 16, arrivalWindowS: 10, maxUtilisation: undefined, size: 'realistic', check: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') options.check = true;
    else if (arg === '--calls') options.calls = Number(argv[++i]);
    else if (arg === '--arrival-window-s') options.arrivalWindowS = Number(argv[++i]);
    else if (arg === '--max-utilisation') options.maxUtilisation = Number(argv[++i]);
    else if (arg === '--size') options.size = argv[++i] === 'small' ? 'small' : 'realistic';
    else throw new Error(`unknown option ${arg} (use --calls N --max-utilisation X --size realistic|small --check)`);
  }
  if (!Number.isInteger(options.calls) || options.calls < 2) throw new Error('--calls must be an integer >= 2');
  return options;
}

const round = (value: number): number | null => (Number.isFinite(value) ? Math.round(value) : null);

/** One server with the given admission setting: a single call, then the burst. */
async function run(label: string, maxUtilisation: number | undefined, options: Options, modelsDir: string, enginesUrl: string, utterances: readonly ScriptedUtterance[]): Promise<RunReport> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-capacity-'));
  const identity = await newBenchServerIdentity();
  const env = benchServerEnv(identity, dataDir, {
    MODELS_DIR: modelsDir,
    WORKERS: '1',
    ...(maxUtilisation === undefined ? {} : { INFERENCE_MAX_UTILISATION: String(maxUtilisation) }),
  });
  const server = await ServerProcess.start(env, identity.port);
  try {
    const config = { ...benchAgentConfig(enginesUrl), stt: { provider: 'local', model: 'whisper-base.en' } };
    const target = await benchLine(identity, { name: 'capacity bench', config }, '+15550008888');

    const single = await runLevel(1, target, utterances);
    const singleRepliesMs = single.calls.flatMap((call) => call.replyLatenciesMs);
    const singleReplies = distribution(singleRepliesMs);
    const capacityAfterSingle = (await benchApi(identity.baseUrl, identity.adminApiKey, '/v1/organization'))['inferenceCapacity'] as Record<string, unknown>;
    process.stdout.write(`${label}: one call, reply p50 ${round(singleReplies.p50)} / p95 ${round(singleReplies.p95)} ms; capacity then ${JSON.stringify(capacityAfterSingle)}\n`);

    const burst = await runLevel(options.calls, target, utterances, (options.arrivalWindowS * 1000) / options.calls);
    const report = burstReport(label, maxUtilisation, burst, singleReplies, capacityAfterSingle, singleRepliesMs);
    process.stdout.write(`${label}: ${report.admitted} of ${report.offered} calls admitted, reply p50 ${report.reply.p50} / p95 ${report.reply.p95} ms, answered ${report.answered}/${report.utterances}\n`);
    return report;
  } catch (error) {
    throw new Error(`${label}: ${error instanceof Error ? error.message : String(error)}\nthe server printed:\n${server.tail}`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function burstReport(
  label: string,
  maxUtilisation: number | undefined,
  burst: LevelOutcome,
  single: ReturnType<typeof distribution>,
  capacityAfterSingle: Record<string, unknown>,
  singleRepliesMs: number[],
): RunReport {
  const admitted = burst.calls.filter((call) => call.refused === undefined && call.error === undefined);
  const replies = distribution(admitted.flatMap((call) => call.replyLatenciesMs));
  return {
    label,
    maxUtilisation: maxUtilisation === undefined ? 'default (0.8)' : String(maxUtilisation),
    single: { replyP50: round(single.p50), replyP95: round(single.p95) },
    singleRepliesMs,
    capacityAfterSingle,
    offered: burst.calls.length,
    admitted: admitted.length,
    refused: burst.calls.filter((call) => call.refused !== undefined).length,
    failed: burst.calls.filter((call) => call.error !== undefined).length,
    utterances: admitted.reduce((sum, call) => sum + call.utterances, 0),
    answered: admitted.reduce((sum, call) => sum + call.answered, 0),
    reply: { p50: round(replies.p50), p95: round(replies.p95), max: round(replies.max) },
    steadyReply: (() => {
      const steady = distribution(admitted.flatMap((call) => call.replyLatenciesMs.slice(1)));
      return { p50: round(steady.p50), p95: round(steady.p95) };
    })(),
    replyP95ByUtterance: [0, 1, 2].map((index) => round(distribution(admitted.flatMap((call) => (call.replyLatenciesMs[index] === undefined ? [] : [call.replyLatenciesMs[index]]))).p95)),
    refusedMessage: burst.calls.find((call) => call.refused !== undefined)?.refused ?? null,
    errors: [...new Set(burst.calls.flatMap((call) => (call.error === undefined ? [] : [call.error])))].slice(0, 5),
  };
}

function printReport(gated: RunReport, reference: RunReport, options: Options): number {
  const header = ['admission', 'INFERENCE_MAX_UTILISATION', 'one call: reply p50 / p95', 'calls offered', 'admitted', 'refused', 'failed', 'answered (admitted calls)', 'admitted calls: reply p50 / p95 / max'];
  const row = (r: RunReport) => [r.label, r.maxUtilisation, `${r.single.replyP50} / ${r.single.replyP95}`, r.offered, r.admitted, r.refused, r.failed, `${r.answered}/${r.utterances}`, `${r.reply.p50} / ${r.reply.p95} / ${r.reply.max}`];
  process.stdout.write(`\nCaller-observed reply latency (end of speech -> first reply frame), ms; local whisper-base.en (${options.size} stand-in) on the server's inference workers, one server process\n`);
  process.stdout.write(`${header.join(' | ')}\n${row(gated).join(' | ')}\n${row(reference).join(' | ')}\n`);
  for (const r of [gated, reference]) {
    process.stdout.write(`${r.label}: admitted calls' reply p95 by utterance ${r.replyP95ByUtterance.join(' / ')} ms; after the arrivals (2nd and 3rd) p50 ${r.steadyReply.p50} / p95 ${r.steadyReply.p95} ms\n`);
  }
  process.stdout.write(`refused callers heard: ${gated.refusedMessage ?? '(none refused)'}\n`);
  for (const r of [gated, reference]) if (r.errors.length > 0) process.stdout.write(`errors (${r.label}): ${r.errors.join('; ')}\n`);
  // One call's latency: its six replies over both runs (the same server but for admission, which admits a lone call either way).
  const singleP50 = round(distribution([...gated.singleRepliesMs, ...reference.singleRepliesMs]).p50);
  const allowedP50 = singleP50 === null ? null : Math.round(singleP50 * P50_FACTOR);
  const allowedP95 = reference.steadyReply.p95 === null ? null : Math.round(reference.steadyReply.p95 * P95_SHARE_OF_REFERENCE);
  const targets = [
    { name: 'calls refused for capacity', value: gated.refused, target: '>= 1', pass: gated.refused >= 1 },
    { name: 'calls admitted', value: gated.admitted, target: '>= 2', pass: gated.admitted >= 2 },
    { name: 'calls failed', value: gated.failed, target: '= 0', pass: gated.failed === 0 },
    { name: 'utterances answered (admitted calls)', value: gated.answered, target: `= ${gated.utterances}`, pass: gated.answered === gated.utterances },
    { name: 'admitted calls: reply p50', value: gated.reply.p50, target: `<= ${allowedP50} ms (one call's p50 over both runs, ${singleP50} ms, x ${P50_FACTOR})`, pass: allowedP50 !== null && gated.reply.p50 !== null && gated.reply.p50 <= allowedP50 },
    {
      name: 'admitted calls: reply p95 after the arrivals (2nd and 3rd utterances)',
      value: gated.steadyReply.p95,
      target: `<= ${allowedP95} ms (${P95_SHARE_OF_REFERENCE} x the reference's, every call admitted)`,
      pass: allowedP95 !== null && gated.steadyReply.p95 !== null && gated.steadyReply.p95 <= allowedP95,
    },
  ];
  for (const target of targets) process.stdout.write(`  ${target.pass ? 'PASS' : 'FAIL'}  ${target.name}: ${String(target.value)} (target ${target.target})\n`);
  process.stdout.write(`BENCH_JSON ${JSON.stringify({ bench: 'capacity', size: options.size, calls: options.calls, runs: [gated, reference], targets })}\n`);
  return targets.filter((target) => !target.pass).length;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const utterances = loadUtterances();
  const modelsDir = mkdtempSync(join(tmpdir(), 'switchboard-capacity-models-'));
  const engines = await startBenchEnginesProcess();
  try {
    const installed = await installWhisperStandIn(modelsDir, options.size);
    if (installed.code !== 0) throw new Error(`npm run models -- pull whisper-base.en failed:\n${installed.lines.join('\n')}`);
    const gated = await run('by capacity', options.maxUtilisation, options, modelsDir, engines.baseUrl, utterances);
    const reference = await run('none (reference)', NO_ADMISSION_UTILISATION, options, modelsDir, engines.baseUrl, utterances);
    const failures = printReport(gated, reference, options);
    if (options.check && failures > 0) process.exitCode = TARGETS_MISSED_EXIT_CODE;
  } finally {
    engines.child.kill();
    rmSync(modelsDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:capacity failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
