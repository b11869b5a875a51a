/**
 * `npm run bench:load`: what callers hear under load, measured from outside the server.
 *
 * Starts the built server (`npm run build` first; `npm run bench:load` does) as its own process, on
 * the embedded database or `--database-url` (a fresh database is created there and dropped after),
 * with a pipeline agent whose STT, LLM and TTS are OpenAI-compatible fakes with fixed delays (a
 * process of their own). This process then places N concurrent calls exactly as Twilio would
 * (signed webhook, media socket, 20 ms frames on one shared clock, marks echoed as their audio
 * plays), each caller speaking a sentence, then 4-8 s of silence, three times, and reports per N:
 * caller-observed reply latency, utterances answered, frames lost, gaps inside replies, and the
 * server's CPU and memory (all its processes) and every process's event-loop delay. `--levels
 * 1,50,100` picks the levels; `--workers N` the server's WORKERS (default: its own, one per core);
 * `--server-node-args '--cpu-prof --cpu-prof-dir=DIR'` profiles the server; `--check` applies the targets.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { distribution } from './latency/latency-stats';
import { startBenchEnginesProcess } from './load/bench-engines-process';
import { benchApi, benchLine, benchServerEnv, newBenchServerIdentity } from './load/bench-server';
import { benchAgentConfig, DEFAULT_LEVELS, TARGETS } from './load/load-settings';
import { loadUtterances, runLevel, type LevelOutcome } from './load/load-driver';
import { ServerProcess, type ProcessSample } from './load/server-process';
import { readServerRecords, type ServerRecords, type WaterfallStep } from './load/server-records';

/** `--check` and a target missed; 1 is a run that could not complete. */
const TARGETS_MISSED_EXIT_CODE = 3;

interface Options {
  levels: number[];
  databaseUrl: string | undefined;
  /** The server's WORKERS setting; undefined: the server's default (one process per core). */
  workers: string | undefined;
  /** Extra Node options for the server process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  serverNodeArgs: string[];
  check: boolean;
}

interface LevelReport {
  calls: number;
  utterances: number;
  answered: number;
  failedCalls: number;
  replyMs: { p50: number | null; p95: number | null; p99: number | null; max: number | null };
  /** Reply p95 of each call's 1st, 2nd, 3rd utterance (the 1st overlaps the arrival burst). */
  replyP95ByUtteranceMs: Array<number | null>;
  /** The voice webhook's answer time (admission), p50/p95/max. */
  answerMs: { p50: number | null; p95: number | null; max: number | null };
  framesSent: number;
  framesLost: number;
  /** Calls whose records (stream_closed) the server had not written 5 s after the level. */
  callsWithoutRecords: number;
  /** The server's own waterfall, step by step (p50/p95 over every reply of the level). */
  serverWaterfall: WaterfallStep[];
  /** The same over each call's first reply (the one that overlaps the arrival burst). */
  serverWaterfallFirstReply: WaterfallStep[];
  gaps: number;
  gapMs: number;
  serverCpuCores: number;
  serverRssMb: number;
  /** The worst of the server processes' event-loop delay p99 over the level (its /metrics, reset at each scrape). */
  serverEventLoopP99Ms: number | null;
  /** Each worker's, in worker order (one entry when WORKERS=1). */
  serverEventLoopP99ByWorkerMs: number[];
  driverEventLoopP99Ms: number;
  lateTicks: number;
  errors: string[];
}

function parseOptions(argv: string[]): Options {
  const options: Options = { levels: DEFAULT_LEVELS, databaseUrl: undefined, workers: undefined, serverNodeArgs: [], check: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') options.check = true;
    else if (arg === '--levels') options.levels = (argv[++i] ?? '').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
    else if (arg === '--database-url') options.databaseUrl = argv[++i];
    else if (arg === '--workers') options.workers = argv[++i];
    else if (arg === '--server-node-args') options.serverNodeArgs = (argv[++i] ?? '').split(' ').filter((part) => part.length > 0);
    else throw new Error(`unknown option ${arg} (use --levels 1,50,100 --database-url URL --workers N --check)`);
  }
  if (!options.levels.includes(1)) options.levels = [1, ...options.levels];
  return options;
}


/** A database of the run's own on the given server, dropped afterwards. */
async function scratchDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `switchboard_load_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * Each server process's event-loop delay p99 since the previous scrape of /metrics (prom-client
 * resets the histogram), in worker order: one series per worker in a cluster, one series otherwise.
 */
async function serverEventLoopP99Ms(server: ServerProcess, operatorKey: string): Promise<number[]> {
  const response = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${operatorKey}` } });
  const text = await response.text();
  const series = [...text.matchAll(/^nodejs_eventloop_lag_p99_seconds(?:\{worker="(\d+)"\})? ([\d.e+-]+)$/gm)];
  return series
    .map((match) => ({ worker: Number(match[1] ?? 0), ms: Math.round(Number(match[2]) * 1e4) / 10 }))
    .sort((a, b) => a.worker - b.worker)
    .map((entry) => entry.ms);
}

function report(outcome: LevelOutcome, records: ServerRecords, cpu: { before: ProcessSample; after: ProcessSample; maxRss: number }, serverLoopP99Ms: number[]): LevelReport {
  const latencies = distribution(outcome.calls.flatMap((call) => call.replyLatenciesMs));
  const answers = distribution(outcome.calls.flatMap((call) => (call.answerMs === null ? [] : [call.answerMs])));
  const round = (value: number) => (Number.isFinite(value) ? Math.round(value) : null);
  return {
    calls: outcome.calls.length,
    utterances: outcome.calls.reduce((sum, call) => sum + call.utterances, 0),
    answered: outcome.calls.reduce((sum, call) => sum + call.answered, 0),
    failedCalls: outcome.calls.filter((call) => call.error !== undefined).length,
    replyMs: { p50: round(latencies.p50), p95: round(latencies.p95), p99: round(latencies.p99), max: round(latencies.max) },
    answerMs: { p50: round(answers.p50), p95: round(answers.p95), max: round(answers.max) },
    replyP95ByUtteranceMs: Array.from({ length: Math.max(0, ...outcome.calls.map((call) => call.replyLatenciesMs.length)) }, (_, index) =>
      round(distribution(outcome.calls.flatMap((call) => (call.replyLatenciesMs[index] === undefined ? [] : [call.replyLatenciesMs[index]]))).p95),
    ),
    framesSent: outcome.calls.reduce((sum, call) => sum + call.framesSent, 0),
    framesLost: records.framesLost,
    callsWithoutRecords: records.callsWithoutRecords,
    serverWaterfall: records.steps,
    serverWaterfallFirstReply: records.firstReplySteps,
    gaps: outcome.calls.reduce((sum, call) => sum + call.gaps, 0),
    gapMs: Math.round(outcome.calls.reduce((sum, call) => sum + call.gapMs, 0) * 10) / 10,
    serverCpuCores: Math.round(((cpu.after.cpuSeconds - cpu.before.cpuSeconds) / ((cpu.after.atMs - cpu.before.atMs) / 1000)) * 100) / 100,
    serverRssMb: Math.round(cpu.maxRss / 2 ** 20),
    serverEventLoopP99Ms: serverLoopP99Ms.length > 0 ? Math.max(...serverLoopP99Ms) : null,
    serverEventLoopP99ByWorkerMs: serverLoopP99Ms,
    driverEventLoopP99Ms: Math.round(outcome.driverEventLoopP99Ms * 10) / 10,
    lateTicks: outcome.lateTicks,
    errors: [...new Set(outcome.calls.flatMap((call) => (call.error === undefined ? [] : [call.error])))].slice(0, 5),
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const utterances = loadUtterances();
  const engines = await startBenchEnginesProcess();
  const database = options.databaseUrl ? await scratchDatabase(options.databaseUrl) : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-load-'));
  const identity = await newBenchServerIdentity();
  let server: ServerProcess | undefined;
  const reports: LevelReport[] = [];
  try {
    const env = benchServerEnv(identity, dataDir, {
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...(options.workers ? { WORKERS: options.workers } : {}),
    });
    server = await ServerProcess.start(env, identity.port, options.serverNodeArgs);
    const target = await benchLine(identity, { name: 'load bench', config: benchAgentConfig(engines.baseUrl) }, '+15550009999');
    for (const level of options.levels) {
      await serverEventLoopP99Ms(server, identity.operatorKey);
      const before = server.sample();
      let maxRss = before.rssBytes;
      const sampler = setInterval(() => (maxRss = Math.max(maxRss, (server as ServerProcess).sample().rssBytes)), 1000);
      const outcome = await runLevel(level, target, utterances);
      clearInterval(sampler);
      const after = server.sample();
      const loopP99 = await serverEventLoopP99Ms(server, identity.operatorKey);
      const records = await readServerRecords((path) => benchApi(identity.baseUrl, identity.adminApiKey, path), outcome.calls);
      const levelReport = report(outcome, records, { before, after, maxRss: Math.max(maxRss, after.rssBytes) }, loopP99);
      reports.push(levelReport);
      process.stdout.write(`level ${level}: reply p50 ${levelReport.replyMs.p50} ms, p95 ${levelReport.replyMs.p95} ms, answered ${levelReport.answered}/${levelReport.utterances}\n`);
    }
  } finally {
    await server?.stop();
    engines.child.kill();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const failures = printReport(reports, options);
  // Its own exit code, so CI can tell targets missed (3) from a run that could not complete (1).
  if (options.check && failures > 0) process.exitCode = TARGETS_MISSED_EXIT_CODE;
}

function printReport(reports: LevelReport[], options: Options): number {
  const rows = reports.map((r) => [
    r.calls, `${r.answered}/${r.utterances}`, r.replyMs.p50, r.replyMs.p95, r.replyMs.p99, r.replyMs.max, r.framesLost, `${r.gaps} (${r.gapMs} ms)`, `${r.answerMs.p50} / ${r.answerMs.p95} / ${r.answerMs.max}`, r.serverCpuCores, r.serverRssMb, r.serverEventLoopP99ByWorkerMs.length > 0 ? r.serverEventLoopP99ByWorkerMs.join(' / ') : 'n/a', r.driverEventLoopP99Ms, r.failedCalls,
  ]);
  const header = ['calls', 'answered', 'reply p50', 'p95', 'p99', 'max', 'frames lost', 'reply gaps', 'webhook answer p50 / p95 / max', 'server cores', 'server RSS MB', 'server loop p99 (each process)', 'driver loop p99', 'failed calls'];
  process.stdout.write(`\nCaller-observed reply latency (end of speech in the caller's audio -> first reply frame received), ms; database: ${options.databaseUrl ? 'Postgres' : 'embedded'}; server WORKERS=${options.workers ?? 'auto'}\n`);
  process.stdout.write(`${header.join(' | ')}\n${rows.map((row) => row.join(' | ')).join('\n')}\n`);
  for (const r of reports) process.stdout.write(`reply p95 at ${r.calls} calls by utterance (1st overlaps the arrival burst): ${r.replyP95ByUtteranceMs.join(' / ')} ms\n`);
  const steps = reports[0]?.serverWaterfall.map((step) => step.name) ?? [];
  process.stdout.write(`\nThe server's own waterfall (its call records), p50 / p95 ms per step:\n${['calls', ...steps].join(' | ')}\n`);
  for (const r of reports) process.stdout.write(`${[r.calls, ...r.serverWaterfall.map((step) => `${step.p50} / ${step.p95}`)].join(' | ')}\n`);
  process.stdout.write(`each call's first reply only:\n`);
  for (const r of reports) process.stdout.write(`${[r.calls, ...r.serverWaterfallFirstReply.map((step) => `${step.p50} / ${step.p95}`)].join(' | ')}\n`);
  for (const r of reports) if (r.callsWithoutRecords > 0) process.stdout.write(`at ${r.calls} calls ${r.callsWithoutRecords} calls had no stream_closed record 5 s after the level\n`);
  for (const r of reports) if (r.errors.length > 0) process.stdout.write(`errors at ${r.calls} calls: ${r.errors.join('; ')}\n`);
  const base = reports.find((r) => r.calls === 1);
  const within = reports.filter((r) => base && r.replyMs.p95 !== null && base.replyMs.p95 !== null && r.replyMs.p95 <= base.replyMs.p95 + TARGETS.p95MarginMs && r.answered === r.utterances);
  const largestWithin = within.length > 0 ? Math.max(...within.map((r) => r.calls)) : null;
  const targets: Array<{ name: string; value: unknown; target: string; pass: boolean }> = [];
  const checked = reports.find((r) => r.calls === TARGETS.checkedLevel);
  if (checked && base && base.replyMs.p50 !== null && base.replyMs.p95 !== null) {
    targets.push({ name: `utterances answered at ${checked.calls} calls`, value: checked.answered, target: `= ${checked.utterances}`, pass: checked.answered === checked.utterances });
    // A call whose records never appeared cannot show its frames were kept: it fails this target too.
    targets.push({ name: `frames lost at ${checked.calls} calls (calls without records)`, value: `${checked.framesLost} (${checked.callsWithoutRecords})`, target: '= 0 (0)', pass: checked.framesLost === 0 && checked.callsWithoutRecords === 0 });
    targets.push({ name: `reply p50 at ${checked.calls} calls`, value: checked.replyMs.p50, target: `<= ${base.replyMs.p50 + TARGETS.p50MarginMs} ms (N=1 + ${TARGETS.p50MarginMs})`, pass: (checked.replyMs.p50 ?? Infinity) <= base.replyMs.p50 + TARGETS.p50MarginMs });
    targets.push({ name: `server event-loop delay p99 at ${checked.calls} calls (worst process)`, value: checked.serverEventLoopP99Ms, target: `< ${TARGETS.eventLoopP99Ms} ms`, pass: checked.serverEventLoopP99Ms !== null && checked.serverEventLoopP99Ms < TARGETS.eventLoopP99Ms });
    targets.push({ name: `reply p95 at ${checked.calls} calls`, value: checked.replyMs.p95, target: `<= ${base.replyMs.p95 + TARGETS.p95MarginMs} ms (N=1 + ${TARGETS.p95MarginMs})`, pass: (checked.replyMs.p95 ?? Infinity) <= base.replyMs.p95 + TARGETS.p95MarginMs });
  }
  process.stdout.write(`largest N whose p95 stays within +${TARGETS.p95MarginMs} ms of N=1 (every utterance answered): ${largestWithin ?? 'none'}\n`);
  for (const target of targets) process.stdout.write(`  ${target.pass ? 'PASS' : 'FAIL'}  ${target.name}: ${String(target.value)} (target ${target.target})\n`);
  process.stdout.write(`BENCH_JSON ${JSON.stringify({ bench: 'load', database: options.databaseUrl ? 'postgres' : 'embedded', workers: options.workers ?? 'auto', levels: reports, largestWithinP95Margin: largestWithin, targets })}\n`);
  return targets.filter((target) => !target.pass).length;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:load failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
