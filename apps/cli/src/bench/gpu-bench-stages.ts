/**
 * What the GPU bench runs: each model on a pipeline agent's call path, fed as the local engines
 * feed it (libs/inference/src/{vad,turn-model,asr/local,tts/local,llm/local}), at realistic size.
 *
 * A stage runs "lanes": one lane per concurrent call. Stateless stages give every request fresh
 * inputs; the decoder stages carry their KV cache from one step to the next as the engines do (the
 * outputs come back as the next step's past), starting over after a reply's worth of tokens so the
 * past length stays what a call sees.
 *
 * Batching follows the engines: VAD, Smart Turn and the Whisper encoder batch along axis 0, so a
 * round of B requests runs as one B-row batch (maxBatchRows B). The decoders batch as their engines
 * load them (whisperDecoderBatching, llmStepBatching): the cached steps of the B calls homed on one
 * worker run as one run there (B / workers rows). Kokoro (its waveform output has no batch axis) and Piper (the engine
 * runs one sentence per run) load with maxBatchRows 1, as their engines do: B requests are B runs
 * spread over the workers ("concurrent").
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  defaultSileroModelPath,
  llmStepBatching,
  type ModelHandle,
  type ModelLoadSpec,
  type ModelRunResult,
  type ModelSequence,
  type TensorData,
  variantPath,
  whisperDecoderBatching,
} from '@switchboard/inference';
import { INT8_STAND_INS, type StandInModelName, standInModelPaths } from '@switchboard/testing';
import type { GpuBenchModel } from './gpu-bench-args';

export interface Lane {
  feeds(): Record<string, TensorData>;
  accept(outputs: Record<string, TensorData>): void;
  /**
   * Stateful lanes (a decoder whose KV cache stays in the worker, as the engines keep it): work
   * before a round that is not measured (starting a sequence over), then `step` instead of a run.
   */
  prepare?(handle: ModelHandle): Promise<void>;
  step?(handle: ModelHandle): Promise<Record<string, TensorData>>;
  close?(): Promise<void>;
}

export interface BenchStage {
  id: 'vad' | 'smart-turn' | 'whisper-encoder' | 'whisper-decoder-first' | 'whisper-decoder-step' | 'kokoro' | 'piper' | 'llm-step';
  model: GpuBenchModel;
  /** What one item is, for the table's notes. */
  item: string;
  path: string;
  mode: 'batched' | 'concurrent';
  batchAxes?: ModelLoadSpec['batchAxes'];
  /** The engine's batching for a model whose batch axes depend on its graph, at `maxRows` rows. */
  batchingFor?: (maxRows: number) => ModelLoadSpec['batchingFor'];
  lane(index: number): Lane;
  /** Seconds of audio one item covers or produces; absent where a real-time factor means nothing. */
  audioSeconds?(outputs: Record<string, TensorData>): number;
}

/** Whisper-base: 6 decoder layers, 8 heads of 64, 1500 encoder positions (whisper-dimensions.ts). */
const WHISPER = { layers: 6, heads: 8, headDim: 64, dModel: 512, positions: 1500, melBins: 80, frames: 3000 };
/** Qwen2.5-0.5B's cache shape (decoder-llm.stand-in.ts): 24 layers, 2 KV heads of 64. */
const LLM = { layers: 24, kvHeads: 2, headDim: 64 };
/** Whisper prompt: start-of-transcript, language, task, no-timestamps. */
export const WHISPER_PROMPT_TOKENS = 4;
/** Decoder steps per reply before a lane starts over (DEFAULT_CALL_MODEL.decoderTokensPerTurn). */
export const WHISPER_REPLY_TOKENS = 20;
/** An LLM turn's context (system prompt + history) and reply length before a lane starts over. */
export const LLM_CONTEXT_TOKENS = 300;
export const LLM_REPLY_TOKENS = 40;
/** A reply sentence of about 12 words: 60 phonemes (Piper interleaves a pad id: 2 x 60 + 2 ids). */
export const TTS_PHONEMES = 60;

const f32 = (dims: number[], fill = 0): TensorData => ({ type: 'float32', data: new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(fill), dims });
const i64 = (values: readonly number[], dims: number[]): TensorData => ({ type: 'int64', data: BigInt64Array.from(values, (value) => BigInt(value)), dims });
/** Seeded filler so inputs are not all zeros (no kernel here skips zeros, but denormals would differ). */
const noise = (dims: number[], seed: number): TensorData => {
  const tensor = f32(dims);
  const data = tensor.data as Float32Array;
  let state = seed >>> 0;
  for (let i = 0; i < data.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    data[i] = state / 0x1_0000_0000 - 0.5;
  }
  return tensor;
};
/** Built once per lane: the runtime copies every request's inputs before handing them to a worker. */
const stateless = (make: () => Record<string, TensorData>): Lane => {
  const feeds = make();
  return { feeds: () => feeds, accept: () => undefined };
};

export function benchStages(models: readonly GpuBenchModel[], modelsDir: string): BenchStage[] {
  const paths = standInModelPaths(modelsDir);
  const whisper = (file: string): string => join(paths.whisper, 'onnx', file);
  const all: BenchStage[] = [
    {
      id: 'vad',
      model: 'vad',
      item: '32 ms window (Silero v5, 8 kHz, real weights)',
      path: defaultSileroModelPath(),
      mode: 'batched',
      batchAxes: { inputs: { input: 0, state: 1 }, outputs: { output: 0, stateN: 1 } },
      lane: (index) => stateless(() => ({ input: noise([1, 32 + 256], index + 1), state: f32([2, 1, 128]), sr: { type: 'int64', data: BigInt64Array.of(8000n), dims: [] } })),
      audioSeconds: () => 0.032,
    },
    {
      id: 'smart-turn',
      model: 'smart-turn',
      item: '8 s window (80 x 800 log-mel)',
      path: paths.smartTurn,
      mode: 'batched',
      lane: (index) => stateless(() => ({ input_features: noise([1, 80, 800], index + 1) })),
      audioSeconds: () => 8,
    },
    {
      id: 'whisper-encoder',
      model: 'whisper',
      item: '30 s window (80 x 3000 log-mel)',
      path: whisper('encoder_model.onnx'),
      mode: 'batched',
      lane: (index) => stateless(() => ({ input_features: noise([1, WHISPER.melBins, WHISPER.frames], index + 1) })),
      audioSeconds: () => 30,
    },
    {
      id: 'whisper-decoder-first',
      model: 'whisper',
      item: 'first decoder step: 4 prompt tokens + cross-attention keys/values from 1500 positions',
      path: whisper('decoder_model_merged.onnx'),
      // Run as the engine's first steps land: each call's sequence is homed on the least busy
      // worker, so B calls spread over the workers (those sharing one join, at no saving here).
      mode: 'concurrent',
      lane: (index) => stateless(() => whisperFirstStepFeeds(index)),
    },
    {
      id: 'whisper-decoder-step',
      model: 'whisper',
      item: `decoder step, KV cache held by the worker (past 4..${WHISPER_PROMPT_TOKENS + WHISPER_REPLY_TOKENS - 1} tokens, 51865-way logits)`,
      path: whisper('decoder_model_merged.onnx'),
      mode: 'batched',
      batchingFor: whisperDecoderBatching,
      lane: (index) => whisperStepLane(index),
    },
    {
      id: 'kokoro',
      model: 'kokoro',
      item: `sentence of ${TTS_PHONEMES} phonemes (${TTS_PHONEMES + 2} ids, 24 kHz)`,
      path: join(paths.kokoro, 'onnx', 'model.onnx'),
      mode: 'concurrent',
      lane: (index) =>
        stateless(() => ({
          input_ids: i64([0, ...phonemeIds(TTS_PHONEMES, index, 1, 177), 0], [1, TTS_PHONEMES + 2]),
          style: noise([1, 256], index + 1),
          speed: f32([1], 1),
        })),
      audioSeconds: (outputs) => samplesOf(outputs) / 24000,
    },
    {
      id: 'piper',
      model: 'piper',
      item: `sentence of ${TTS_PHONEMES} phonemes (${2 * TTS_PHONEMES + 2} ids with pads, 22.05 kHz)`,
      path: paths.piper,
      mode: 'concurrent',
      batchAxes: { inputs: { input: 0, input_lengths: 0 }, outputs: { output: 0 } },
      lane: (index) => {
        const ids = [1, ...phonemeIds(TTS_PHONEMES, index, 14, 255).flatMap((id) => [id, 0]), 2];
        return stateless(() => ({ input: i64(ids, [1, ids.length]), input_lengths: i64([ids.length], [1]), scales: { type: 'float32', data: Float32Array.of(0.667, 1, 0.8), dims: [3] } }));
      },
      audioSeconds: (outputs) => samplesOf(outputs) / 22050,
    },
    {
      id: 'llm-step',
      model: 'llm',
      item: `decode step with KV cache (Qwen2.5-0.5B cache shape, past ${LLM_CONTEXT_TOKENS}..${LLM_CONTEXT_TOKENS + LLM_REPLY_TOKENS - 1})`,
      path: join(paths.llm, 'onnx', 'model.onnx'),
      mode: 'batched',
      batchingFor: llmStepBatching,
      lane: () => llmStepLane(),
    },
  ];
  return all.filter((stage) => models.includes(stage.model));
}

/**
 * Stand-ins the chosen stages need whose files are not there yet (VAD uses the real weights), with
 * their int8 variants when int8 is benchmarked and the stand-in has one.
 */
export function missingStandIns(stages: readonly BenchStage[], int8 = false): StandInModelName[] {
  const missing = new Set<StandInModelName>();
  for (const stage of stages) {
    if (stage.model === 'vad') continue;
    const variantMissing = int8 && INT8_STAND_INS.includes(stage.model) && !existsSync(variantPath(stage.path, '_int8'));
    if (!existsSync(stage.path) || variantMissing) missing.add(stage.model);
  }
  return [...missing];
}

function whisperFirstStepFeeds(index: number): Record<string, TensorData> {
  const feeds: Record<string, TensorData> = {
    input_ids: i64([50258, 50259, 50360, 50364], [1, WHISPER_PROMPT_TOKENS]),
    encoder_hidden_states: noise([1, WHISPER.positions, WHISPER.dModel], index + 1),
    use_cache_branch: { type: 'bool', data: Uint8Array.of(0), dims: [1] },
  };
  for (let layer = 0; layer < WHISPER.layers; layer++) {
    for (const name of ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value']) {
      feeds[`past_key_values.${layer}.${name}`] = f32([1, WHISPER.heads, 0, WHISPER.headDim]);
    }
  }
  return feeds;
}

/**
 * One call's decoder with its state held by the worker, as the engines run it: `open` starts a
 * sequence (not measured) and says the position it left; each measured step feeds the token at the
 * current position and gets its logits back; at `lastPosition` the next round starts over.
 */
function residentSequenceLane(options: {
  lastPosition: number;
  open: (sequence: ModelSequence) => Promise<number>;
  step: (sequence: ModelSequence, past: number) => Promise<ModelRunResult>;
}): Lane {
  let sequence: ModelSequence | undefined;
  let past = 0;
  return {
    feeds: () => ({}),
    accept: () => undefined,
    prepare: async (handle) => {
      if (sequence && past < options.lastPosition) return;
      await sequence?.close();
      sequence = handle.openSequence!();
      past = await options.open(sequence);
    },
    step: async () => {
      const result = await options.step(sequence!, past);
      past += 1;
      return result.outputs;
    },
    close: async () => sequence?.close(),
  };
}

/**
 * One call's Whisper decoding after the first step: the first step (not measured: that is
 * whisper-decoder-first) leaves the decoder's and the cross-attention keys and values in the worker.
 */
function whisperStepLane(index: number): Lane {
  const carry = (parts: readonly string[]): Record<string, string> =>
    Object.fromEntries(
      Array.from({ length: WHISPER.layers }, (_, layer) => parts.flatMap((part) => ['key', 'value'].map((kind) => [`present.${layer}.${part}.${kind}`, `past_key_values.${layer}.${part}.${kind}`]))).flat(),
    );
  const crossPresents = Object.keys(carry(['encoder']));
  return residentSequenceLane({
    lastPosition: WHISPER_PROMPT_TOKENS + WHISPER_REPLY_TOKENS - 1,
    open: async (sequence) => {
      await sequence.step(whisperFirstStepFeeds(index), { carry: carry(['decoder', 'encoder']), retain: ['encoder_hidden_states'] });
      return WHISPER_PROMPT_TOKENS;
    },
    step: (sequence, past) =>
      sequence.step(
        { input_ids: i64([300 + past], [1, 1]), use_cache_branch: { type: 'bool', data: Uint8Array.of(1), dims: [1] } },
        { carry: carry(['decoder']), discard: crossPresents },
      ),
  });
}

/**
 * One call's LLM reply: a context of LLM_CONTEXT_TOKENS is put in the worker first (not measured),
 * then each step feeds one token, its position and the attention mask.
 */
function llmStepLane(): Lane {
  const carry: Record<string, string> = {};
  for (let layer = 0; layer < LLM.layers; layer++) for (const kind of ['key', 'value']) carry[`present.${layer}.${kind}`] = `past_key_values.${layer}.${kind}`;
  const tokenFeeds = (past: number): Record<string, TensorData> => ({
    input_ids: i64([100], [1, 1]),
    attention_mask: { type: 'int64', data: new BigInt64Array(past + 1).fill(1n), dims: [1, past + 1] },
    position_ids: i64([past], [1, 1]),
  });
  return residentSequenceLane({
    lastPosition: LLM_CONTEXT_TOKENS + LLM_REPLY_TOKENS - 1,
    open: async (sequence) => {
      const past = LLM_CONTEXT_TOKENS - 1;
      const seed = tokenFeeds(past);
      for (let layer = 0; layer < LLM.layers; layer++) {
        for (const kind of ['key', 'value']) seed[`past_key_values.${layer}.${kind}`] = noise([1, LLM.kvHeads, past, LLM.headDim], layer + 3);
      }
      await sequence.step(seed, { carry });
      return LLM_CONTEXT_TOKENS;
    },
    step: (sequence, past) => sequence.step(tokenFeeds(past), { carry }),
  });
}

function phonemeIds(count: number, seed: number, min: number, max: number): number[] {
  return Array.from({ length: count }, (_, i) => min + ((seed * 31 + i * 17) % (max - min + 1)));
}

function samplesOf(outputs: Record<string, TensorData>): number {
  const first = Object.values(outputs)[0];
  return first ? first.data.length : 0;
}
