/**
 * `npm run bench:audio [-- --check] [-- --skip-quality]`
 *
 * Side by side, in one process: our StreamingResampler ('telephony' quality) on its default
 * kernel (WASM SIMD where available) and on the forced TypeScript fallback, against speexdsp
 * quality 4 (WASM SIMD), libsamplerate SINC_FASTEST (WASM) and a naive linear interpolator, on
 * 20 ms frames for each listed conversion; then our G.711 codecs against `alawmulaw`. Prints a
 * table, then one `BENCH_JSON {...}` line with every figure.
 *
 * --check exits 1 when our resampler on its default kernel is slower than speex q4 on any
 * conversion, or a codec is slower than alawmulaw (best-round times on both sides). The forced
 * TypeScript row is informational. Otherwise the exit code is 0 unless something is broken.
 */
import { cpus } from 'node:os';
import { benchCodecs, type CodecRow } from './audio-bench-codecs';
import { measureQuality, type QualityFigures } from './audio-bench-quality';
import {
  libsamplerateContender,
  linearContender,
  speexContender,
  switchboardContender,
  type FrameResampler,
  type ResamplerContender,
} from './audio-bench-resamplers';
import { timeInterleaved, type Timing } from './audio-bench-timing';

const CONVERSIONS: ReadonlyArray<readonly [number, number]> = [
  [8000, 16000],
  [16000, 8000],
  [8000, 24000],
  [24000, 8000],
  [22050, 8000],
];
const FRAME_MS = 20;
const TIMING = { warmupCalls: 1500, rounds: 40, callsPerRound: 100 };
const QUALITY_STEP_HZ = 100;

interface ResamplerRow {
  readonly conversion: string;
  readonly implementation: ResamplerContender['id'];
  readonly label: string;
  readonly timing: Timing;
  readonly quality?: QualityFigures;
}

async function main(): Promise<number> {
  const args = new Set(process.argv.slice(2));
  const check = args.has('--check');
  const skipQuality = args.has('--skip-quality');
  const startedAt = Date.now();
  const contenders = [switchboardContender('auto'), switchboardContender('typescript'), await speexContender(4), await libsamplerateContender(), linearContender()];

  const rows: ResamplerRow[] = [];
  for (const [inputRate, outputRate] of CONVERSIONS) {
    rows.push(...(await benchConversion(contenders, inputRate, outputRate, skipQuality)));
  }
  const codecRows = benchCodecs();

  printResamplerTable(rows);
  printCodecTable(codecRows);
  const failures = checkFailures(rows, codecRows);
  const elapsedMs = Date.now() - startedAt;
  console.log(`\nBench took ${(elapsedMs / 1000).toFixed(1)} s on ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}.`);
  for (const failure of failures) console.log(`SLOWER: ${failure}`);
  console.log(`BENCH_JSON ${JSON.stringify(benchJson(rows, codecRows, failures, elapsedMs))}`);
  return check && failures.length > 0 ? 1 : 0;
}

async function benchConversion(
  contenders: readonly ResamplerContender[],
  inputRate: number,
  outputRate: number,
  skipQuality: boolean,
): Promise<ResamplerRow[]> {
  const frameLength = (inputRate * FRAME_MS) / 1000;
  const signal = benchSignal(inputRate, frameLength * 50);
  const calls = new Map<string, () => void>();
  const instances: FrameResampler[] = [];
  for (const contender of contenders) {
    await contender.prepare?.(inputRate, outputRate, 1);
    const resampler = contender.create(inputRate, outputRate);
    instances.push(resampler);
    let offset = 0;
    calls.set(contender.id, () => {
      resampler.process(signal.subarray(offset, offset + frameLength));
      offset = offset + frameLength >= signal.length ? 0 : offset + frameLength;
    });
  }
  const timings = timeInterleaved(calls, TIMING);
  for (const instance of instances) instance.dispose();
  const rows: ResamplerRow[] = [];
  for (const contender of contenders) {
    const quality = skipQuality ? undefined : await measureQuality(contender, inputRate, outputRate, QUALITY_STEP_HZ);
    rows.push({ conversion: conversionName(inputRate, outputRate), implementation: contender.id, label: contender.label, timing: timings.get(contender.id)!, quality });
  }
  return rows;
}

/** A second of speech-band content: three tones and a little deterministic noise, at -12 dBFS. */
function benchSignal(sampleRate: number, length: number): Int16Array {
  const signal = new Int16Array(length);
  let seed = 12345;
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const t = i / sampleRate;
    const value = 2500 * Math.sin(2 * Math.PI * 230 * t) + 2000 * Math.sin(2 * Math.PI * 1170 * t) + 1200 * Math.sin(2 * Math.PI * 2900 * t);
    signal[i] = Math.round(value + ((seed / 0x7fffffff) * 2 - 1) * 300);
  }
  return signal;
}

function conversionName(inputRate: number, outputRate: number): string {
  const k = (rate: number): string => `${rate / 1000}k`;
  return `${k(inputRate)}->${k(outputRate)}`;
}

function speexBest(rows: readonly ResamplerRow[], conversion: string): number {
  return rows.find((row) => row.conversion === conversion && row.implementation === 'speex-q4')!.timing.bestNs;
}

function printResamplerTable(rows: readonly ResamplerRow[]): void {
  console.log(`Resamplers: ${FRAME_MS} ms frames; best of ${TIMING.rounds} rounds x ${TIMING.callsPerRound} frames (median round in brackets).`);
  console.log('x realtime = seconds of audio per CPU second. Quality: sine sweeps at -1 dBFS (alias = downsampling, image = upsampling).');
  const header = ['conversion', 'implementation', 'x realtime', 'ns/frame (median)', 'vs speex q4', 'alias/image dBFS', 'ripple dB'];
  const lines = rows.map((row) => {
    const speex = speexBest(rows, row.conversion);
    return [
      row.conversion,
      row.label,
      ((FRAME_MS * 1e6) / row.timing.bestNs).toFixed(0),
      `${row.timing.bestNs.toFixed(0)} (${row.timing.medianNs.toFixed(0)})`,
      `${(speex / row.timing.bestNs).toFixed(2)}x`,
      row.quality ? row.quality.worstSpuriousDbfs.toFixed(1) : '-',
      row.quality ? row.quality.passbandRippleDb.toFixed(3) : '-',
    ];
  });
  printTable(header, lines);
  console.log('"vs speex q4" is speed relative to speex (above 1.00x = faster than speex).');
  console.log('libsamplerate SINC_FASTEST is designed for 80% bandwidth: its "ripple" is its roll-off at 0.85 of Nyquist.');
}

function printCodecTable(rows: readonly CodecRow[]): void {
  console.log('\nG.711 codecs: 160-sample (20 ms) frames, best round (median).');
  const header = ['operation', 'ours ns/frame', 'alawmulaw ns/frame', 'speed-up'];
  printTable(
    header,
    rows.map((row) => [
      row.operation,
      `${row.ours.bestNs.toFixed(0)} (${row.ours.medianNs.toFixed(0)})`,
      `${row.alawmulaw.bestNs.toFixed(0)} (${row.alawmulaw.medianNs.toFixed(0)})`,
      `${(row.alawmulaw.bestNs / row.ours.bestNs).toFixed(1)}x`,
    ]),
  );
}

function printTable(header: readonly string[], lines: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: readonly string[]): string => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}

function checkFailures(rows: readonly ResamplerRow[], codecRows: readonly CodecRow[]): string[] {
  const failures: string[] = [];
  for (const row of rows) {
    if (row.implementation !== 'switchboard') continue;
    const speex = speexBest(rows, row.conversion);
    if (row.timing.bestNs > speex) {
      failures.push(`resampler ${row.conversion}: ${row.timing.bestNs.toFixed(0)} ns/frame vs speex q4 ${speex.toFixed(0)} (${(speex / row.timing.bestNs).toFixed(2)}x)`);
    }
  }
  for (const row of codecRows) {
    if (row.ours.bestNs > row.alawmulaw.bestNs) {
      failures.push(`codec ${row.operation}: ${row.ours.bestNs.toFixed(0)} ns/frame vs alawmulaw ${row.alawmulaw.bestNs.toFixed(0)}`);
    }
  }
  return failures;
}

function benchJson(rows: readonly ResamplerRow[], codecRows: readonly CodecRow[], failures: readonly string[], elapsedMs: number): object {
  return {
    bench: 'audio',
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    frameMs: FRAME_MS,
    elapsedMs,
    resamplers: rows.map((row) => ({
      conversion: row.conversion,
      implementation: row.implementation,
      nsPerFrameBest: Math.round(row.timing.bestNs),
      nsPerFrameMedian: Math.round(row.timing.medianNs),
      xRealtime: Math.round((FRAME_MS * 1e6) / row.timing.bestNs),
      speedVsSpeexQ4: Number((speexBest(rows, row.conversion) / row.timing.bestNs).toFixed(3)),
      worstAliasOrImageDbfs: row.quality ? Number(row.quality.worstSpuriousDbfs.toFixed(2)) : null,
      passbandRippleDb: row.quality ? Number(row.quality.passbandRippleDb.toFixed(4)) : null,
    })),
    codecs: codecRows.map((row) => ({
      operation: row.operation,
      oursNsPerFrame: Math.round(row.ours.bestNs),
      alawmulawNsPerFrame: Math.round(row.alawmulaw.bestNs),
      speedup: Number((row.alawmulaw.bestNs / row.ours.bestNs).toFixed(2)),
    })),
    slowerThanReference: failures,
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
