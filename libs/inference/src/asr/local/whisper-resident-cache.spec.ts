import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { EngineError, type InferenceRuntime, type ModelHandle, type TensorData } from '../../contracts';
import { createInferenceRuntime, SEQUENCE_LOST_MESSAGE, type BatchRecord, type OnnxInferenceRuntime } from '../../runtime';
import { WHISPER_DIMENSIONS, writeWhisperStandIn } from '@switchboard/testing';
import { LocalWhisperAsr } from './local-whisper-asr';

jest.setTimeout(30_000);

/**
 * The Whisper decoder's KV cache stays in the inference worker (ModelSequence): a token posts its
 * id and receives its logits, where the caller-carried cache posted every past key and value, and
 * the encoder's states, on every token. Same tokens either way.
 */
const FIXTURES = join(__dirname, '../../../../../test/fixtures/speech');
const speech = (name: string): Int16Array => readWav(readFileSync(join(FIXTURES, `${name}.16k.wav`))).samples;
const quietLogger = { log: () => undefined, warn: () => undefined };
const dims = WHISPER_DIMENSIONS.small;
const headDim = dims.dModel / dims.heads;

/** The same runtime, but its handles offer no sequences: the decoder carries the cache itself. */
function callerCarried(runtime: InferenceRuntime): InferenceRuntime {
  return {
    device: runtime.device,
    close: () => runtime.close(),
    loadModel: async (spec) => {
      const handle = await runtime.loadModel(spec);
      const plain: ModelHandle = { name: handle.name, device: handle.device, inputNames: handle.inputNames, outputNames: handle.outputNames, run: (feeds, context) => handle.run(feeds, context) };
      return plain;
    },
  };
}

const int64 = (values: number[]): TensorData => ({ type: 'int64', data: BigInt64Array.from(values, BigInt), dims: [1, values.length] });
const bool = (value: boolean): TensorData => ({ type: 'bool', data: Uint8Array.of(value ? 1 : 0), dims: [1] });
const emptyPast = (): TensorData => ({ type: 'float32', data: new Float32Array(0), dims: [1, dims.heads, 0, headDim] });
const pastNames = (kind: 'decoder' | 'encoder' | 'both') =>
  Array.from({ length: dims.decoderLayers }, (_, layer) =>
    (kind === 'both' ? ['decoder', 'encoder'] : [kind]).flatMap((part) => [`${layer}.${part}.key`, `${layer}.${part}.value`]),
  ).flat();

describe('Whisper decoding with the KV cache kept in the inference worker', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'whisper-resident-'));
    await writeWhisperStandIn(join(dir, 'merged'), { decoders: ['merged'] });
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 2, logger: quietLogger });
  });

  afterAll(async () => {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the same tokens as the caller-carried cache, token for token, and leaves no sequence open', async () => {
    const resident = await LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'merged') });
    const carried = await LocalWhisperAsr.load({ runtime: callerCarried(runtime), modelDir: join(dir, 'merged') });
    for (const name of ['goodbye', 'hours', 'transfer']) {
      const [a, b] = await Promise.all([resident.transcribe(speech(name)), carried.transcribe(speech(name))]);
      expect(a.tokens.length).toBeGreaterThan(2);
      expect(a.tokens).toEqual(b.tokens);
      expect(a.decoderSteps).toBe(b.decoderSteps);
    }
    expect(runtime.openSequences).toBe(0);
  });

  it('batches concurrent calls: windows encoded together, decoder steps run together, and each call gets the tokens it gets alone', async () => {
    const batches: BatchRecord[] = [];
    const batching = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: quietLogger, onBatch: (batch) => void batches.push(batch) });
    try {
      const asr = await LocalWhisperAsr.load({ runtime: batching, modelDir: join(dir, 'merged') });
      const names = ['goodbye', 'hours', 'transfer', 'goodbye'];
      const alone = [];
      for (const name of names) alone.push(await asr.transcribe(speech(name)));
      batches.length = 0;
      const together = await Promise.all(names.map(async (name, index) => (await asr.transcribe(speech(name), { callId: `call-${index}` })).tokens));
      expect(together).toEqual(alone.map((transcription) => transcription.tokens));
      // The first window starts on the idle worker at once; the others gather while it runs.
      const encoderRows = batches.filter((batch) => batch.model.endsWith('/encoder')).map((batch) => batch.rows);
      expect(encoderRows.reduce((sum, rows) => sum + rows, 0)).toBe(names.length);
      expect(Math.max(...encoderRows)).toBeGreaterThan(1);
      // Windows encoded together decode in lockstep: their steps (caches of equal length) share runs.
      const decoderRuns = batches.filter((batch) => batch.model.endsWith('/decoder'));
      const steps = alone.reduce((sum, transcription) => sum + transcription.decoderSteps, 0);
      expect(decoderRuns.reduce((sum, batch) => sum + batch.rows, 0)).toBe(steps);
      expect(Math.max(...decoderRuns.map((batch) => batch.rows))).toBeGreaterThanOrEqual(encoderRows[encoderRows.length - 1]!);
      expect(decoderRuns.length).toBeLessThan(steps);
      expect(batching.openSequences).toBe(0);
    } finally {
      await batching.close();
    }
  });

  it('a token posts its id and receives its logits: bytes per token counted at the thread boundary', async () => {
    const decoder = await runtime.loadModel({ name: 'whisper-resident/decoder', path: join(dir, 'merged', 'onnx', 'decoder_model_merged.onnx') });
    const hidden: TensorData = { type: 'float32', data: new Float32Array(dims.sourcePositions * dims.dModel).fill(0.01), dims: [1, dims.sourcePositions, dims.dModel] };
    const firstFeeds = (): Record<string, TensorData> => ({
      input_ids: int64([1, 2, 3]),
      encoder_hidden_states: hidden,
      use_cache_branch: bool(false),
      ...Object.fromEntries(pastNames('both').map((name) => [`past_key_values.${name}`, emptyPast()])),
    });
    const carryAll = Object.fromEntries(pastNames('both').map((name) => [`present.${name}`, `past_key_values.${name}`]));
    const carrySelf = Object.fromEntries(pastNames('decoder').map((name) => [`present.${name}`, `past_key_values.${name}`]));
    const discardCross = pastNames('encoder').map((name) => `present.${name}`);

    // Worker-resident: the first step feeds everything once; each later token, two tiny tensors.
    const sequence = decoder.openSequence();
    await sequence.step(firstFeeds(), { carry: carryAll, retain: ['encoder_hidden_states'] });
    const residentPerToken: Array<{ posted: number; received: number }> = [];
    const residentLogits: Float32Array[] = [];
    for (let token = 0; token < 8; token++) {
      const before = runtime.transferStats();
      const { outputs } = await sequence.step({ input_ids: int64([10 + token]), use_cache_branch: bool(true) }, { carry: carrySelf, discard: discardCross });
      const after = runtime.transferStats();
      residentPerToken.push({ posted: after.postedBytes - before.postedBytes, received: after.receivedBytes - before.receivedBytes });
      expect(Object.keys(outputs)).toEqual(['logits']);
      residentLogits.push(outputs['logits']!.data as Float32Array);
    }
    await sequence.close();

    // Caller-carried: every token posts the encoder states and every past key and value.
    let cache: Record<string, TensorData> = (await decoder.run(firstFeeds())).outputs;
    const carriedPerToken: number[] = [];
    for (let token = 0; token < 8; token++) {
      const feeds: Record<string, TensorData> = { input_ids: int64([10 + token]), encoder_hidden_states: hidden, use_cache_branch: bool(true) };
      for (const name of pastNames('both')) feeds[`past_key_values.${name}`] = cache[`present.${name}`]!;
      const before = runtime.transferStats();
      const { outputs } = await decoder.run(feeds);
      carriedPerToken.push(runtime.transferStats().postedBytes - before.postedBytes);
      // Same numbers either way: the worker ran the same graph on the same state.
      expect(outputs['logits']!.data).toEqual(residentLogits[token]);
      const next: Record<string, TensorData> = { ...outputs };
      for (const name of pastNames('encoder')) next[`present.${name}`] = cache[`present.${name}`]!;
      cache = next;
    }

    const logitsBytes = residentLogits[0]!.byteLength;
    // input_ids (8 bytes) + use_cache_branch (1 byte), whatever the position.
    expect(residentPerToken.map((token) => token.posted)).toEqual(Array(8).fill(9));
    expect(residentPerToken.map((token) => token.received)).toEqual(Array(8).fill(logitsBytes));
    // The carried cache posts the encoder states (1500 x 64 floats here, 3 MB in whisper-base) and a growing cache.
    expect(Math.min(...carriedPerToken)).toBeGreaterThan(hidden.data.byteLength);
    expect(carriedPerToken[7]!).toBeGreaterThan(carriedPerToken[0]!);
    expect(runtime.openSequences).toBe(0);
  });

  it('a step whose worker was restarted fails as retryable, naming the lost state', async () => {
    const decoder = await runtime.loadModel({ name: 'whisper-resident/decoder', path: join(dir, 'merged', 'onnx', 'decoder_model_merged.onnx') });
    const sequence = decoder.openSequence();
    const hidden: TensorData = { type: 'float32', data: new Float32Array(dims.sourcePositions * dims.dModel), dims: [1, dims.sourcePositions, dims.dModel] };
    await sequence.step(
      { input_ids: int64([1]), encoder_hidden_states: hidden, use_cache_branch: bool(false), ...Object.fromEntries(pastNames('both').map((name) => [`past_key_values.${name}`, emptyPast()])) },
      { carry: Object.fromEntries(pastNames('both').map((name) => [`present.${name}`, `past_key_values.${name}`])), retain: ['encoder_hidden_states'] },
    );
    // Neither fed nor held: refused before it reaches the worker.
    await expect(sequence.step({ use_cache_branch: bool(true) }, {})).rejects.toThrow(/missing input 'input_ids' \(neither fed nor held/);
    for (let index = 0; index < runtime.workerCount; index++) await runtime.terminateWorker(index);
    const failure = await sequence.step({ input_ids: int64([5]), use_cache_branch: bool(true) }, {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EngineError);
    expect((failure as EngineError).retryable).toBe(true);
    expect((failure as EngineError).message).toContain(SEQUENCE_LOST_MESSAGE);
    await sequence.close();
    expect(runtime.openSequences).toBe(0);
  });
});
