/** The GPU bench's printed table, capacity lines and BENCH_JSON object. */
import { callsPerDevice, type CallModel, type CapacityResult, type PathCosts, type StageCost } from './gpu-bench-capacity';
import type { SkippedMeasurement, StageMeasurement } from './gpu-bench-measure';
import type { BenchStage } from './gpu-bench-stages';

export type Measurement = StageMeasurement | SkippedMeasurement;

export const isMeasured = (measurement: Measurement): measurement is StageMeasurement => !('skipped' in measurement);

export function printMeasurements(measurements: readonly Measurement[], stages: readonly BenchStage[]): void {
  printTable(
    ['model', 'batch', 'mode', 'rows/run', 'rounds', 'p50 ms', 'p95 ms', 'items/s', 'compute ms/item', 'RTF'],
    measurements.map((m) =>
      isMeasured(m)
        ? [m.stage, String(m.batch), m.mode, m.rowsPerRun.toFixed(1), String(m.rounds), ms(m.p50Ms), ms(m.p95Ms), m.itemsPerS.toFixed(1), ms(m.computeMsPerItem), m.rtf === undefined ? '-' : m.rtf.toFixed(4)]
        : [m.stage, String(m.batch), 'skipped', '-', '-', '-', '-', '-', '-', '-'],
    ),
  );
  for (const m of measurements) if (!isMeasured(m)) console.log(`  ${m.stage} batch ${m.batch} skipped: ${m.skipped}`);
  console.log('\nOne item is:');
  for (const stage of stages) {
    const audio = measurements.find((m): m is StageMeasurement => isMeasured(m) && m.stage === stage.id && m.audioSecondsPerItem !== undefined);
    console.log(`  ${stage.id}: ${stage.item}${audio && (stage.model === 'kokoro' || stage.model === 'piper') ? `, ${audio.audioSecondsPerItem!.toFixed(2)} s of audio` : ''}`);
  }
  console.log('p50/p95: wall time of a round of <batch> items submitted together; compute: workers\' ONNX time per item; RTF: compute s per audio s.');
}

/** Capacity per TTS engine measured; undefined where a stage the model needs was not measured. */
export function capacities(measurements: readonly Measurement[], model: CallModel): Array<{ tts: string; result: CapacityResult }> | undefined {
  const costs = (id: BenchStage['id']): StageCost[] => measurements.filter(isMeasured).filter((m) => m.stage === id);
  const base = {
    vad: costs('vad'),
    smartTurn: costs('smart-turn'),
    whisperEncoder: costs('whisper-encoder'),
    whisperDecoderFirst: costs('whisper-decoder-first'),
    whisperDecoderStep: costs('whisper-decoder-step'),
  };
  const llm = costs('llm-step');
  if (Object.values(base).some((stage) => stage.length === 0)) return undefined;
  const results = (['kokoro', 'piper'] as const)
    .filter((tts) => costs(tts).length > 0)
    .map((tts) => {
      const path: PathCosts = { ...base, tts: costs(tts), ...(llm.length > 0 ? { llmStep: llm } : {}) };
      return { tts, result: callsPerDevice(path, model) };
    });
  return results.length > 0 ? results : undefined;
}

export function printCapacity(results: ReturnType<typeof capacities>, model: CallModel, unitsNote: string, hasLlm: boolean): void {
  console.log(`\nCalls one device carries (pipeline agent, reply-latency budget ${model.budgetMs} ms):`);
  console.log(
    `  Demand per call: VAD ${model.vadWindowsPerS.toFixed(2)} windows/s (caller audio only); one caller turn every ${model.turnIntervalS} s of call ` +
      `(e.g. 3 s of speech per 8 s), each: 1 Smart Turn run, 1 Whisper encode, 1 first decoder step + ${model.decoderTokensPerTurn - 1} cached steps, ` +
      `${model.ttsSentencesPerTurn} TTS sentences${hasLlm ? `, ${model.llmTokensPerTurn} LLM steps (prefill not counted)` : ' (LLM not measured: reply text assumed to come from elsewhere)'}.`,
  );
  console.log(`  Device: ${unitsNote}; utilisation target ${model.utilisationTarget}.`);
  console.log(
    '  Reply path = Smart Turn p95 + encode p95 + first step p95 + cached steps x p50 + first TTS sentence p95' +
      `${hasLlm ? ` + ${model.llmTokensToFirstSentence} LLM steps x p50` : ''}, at the batch of concurrent turns: the 95th percentile of ` +
      'Poisson(calls / turn interval x budget), read at the smallest measured batch >= it.',
  );
  if (!results) {
    console.log('  Not computed: needs vad, smart-turn, whisper and kokoro or piper (see --models).');
    return;
  }
  for (const { tts, result } of results) {
    console.log(
      `  with ${tts}: (a) utilisation-bound ${result.utilisationBound} calls (one call needs ${result.computePerCallAtBatch1.toFixed(4)} compute-s/s at batch 1); ` +
        `(b) latency-bound ${result.latencyBound} calls (reply path alone ${result.replyPathMsAtBatch1.toFixed(0)} ms; limited by ${result.latencyLimit}) ` +
        `=> calls per device: ${result.callsPerDevice}`,
    );
  }
}

export interface BenchContext {
  requestedDevice: string;
  device: string;
  workers: number;
  cpu: string;
  cores: number;
  node: string;
  seconds: number;
  batches: readonly number[];
  /** Requested for every model; `precisions` says what each loaded model ran. */
  precision: string;
  precisions: Record<string, string>;
  standInBuildMs: number | null;
  elapsedMs: number;
  loadAverage: readonly number[];
}

export function benchJson(context: BenchContext, measurements: readonly Measurement[], results: ReturnType<typeof capacities>, model: CallModel): object {
  const round = (value: number | undefined, digits = 3): number | null => (value === undefined || !Number.isFinite(value) ? null : Number(value.toFixed(digits)));
  const models: Record<string, Record<string, object>> = {};
  for (const m of measurements) {
    (models[m.stage] ??= {})[String(m.batch)] = isMeasured(m)
      ? {
          mode: m.mode,
          rowsPerRun: round(m.rowsPerRun, 2),
          rounds: m.rounds,
          p50Ms: round(m.p50Ms),
          p95Ms: round(m.p95Ms),
          itemsPerS: round(m.itemsPerS, 2),
          computeMsPerItem: round(m.computeMsPerItem, 4),
          audioSecondsPerItem: round(m.audioSecondsPerItem),
          rtf: round(m.rtf, 5),
        }
      : { skipped: m.skipped };
  }
  return {
    bench: 'gpu',
    ...context,
    loadAverage: context.loadAverage.map((value) => round(value, 2)),
    callModel: model,
    models,
    capacity: results?.map(({ tts, result }) => ({ tts, ...result, computePerCallAtBatch1: round(result.computePerCallAtBatch1, 5), replyPathMsAtBatch1: round(result.replyPathMsAtBatch1, 1) })) ?? null,
    callsPerDevice: results?.[0]?.result.callsPerDevice ?? null,
  };
}

function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(3);
}

function printTable(header: readonly string[], lines: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => (line[column] ?? '').length)));
  const format = (cells: readonly string[]): string => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}
