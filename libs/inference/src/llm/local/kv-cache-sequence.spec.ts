import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelHandle } from '../../contracts';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../../runtime';
import { writeDecoderLlmStandIn } from '@switchboard/testing';
import { KvCacheSequence, type DecoderCacheShape } from './kv-cache-sequence';
import { readLlmModelFolder, type LlmModelFolder } from './llm-model-folder';

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs((a[i] as number) - (b[i] as number)));
  return max;
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if ((values[i] as number) > (values[best] as number)) best = i;
  return best;
}

describe('KvCacheSequence (decoder-only KV cache on the stand-in export)', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;
  let model: ModelHandle;
  let folder: LlmModelFolder;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kv-cache-'));
    await writeDecoderLlmStandIn(dir);
    folder = await readLlmModelFolder(dir, 'stand-in');
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log: () => undefined, warn: () => undefined } });
    model = await runtime.loadModel({ name: 'decoder-llm', path: folder.modelPath, maxBatchRows: 1 });
  });

  afterAll(async () => {
    await runtime?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const sequence = (chunk = 512, shape: DecoderCacheShape = folder): KvCacheSequence => new KvCacheSequence('stand-in', model, shape, {}, chunk);

  it('decoding step by step with the cache gives the logits of recomputing the whole sequence (within 1e-5)', async () => {
    const prompt = folder.tokenizer.encode('<|im_start|>user\nWhere is my order?<|im_end|>\n<|im_start|>assistant\n');
    const cached = sequence();
    let logits = await cached.append(prompt);
    const tokens = [...prompt];
    for (let step = 0; step < 4; step++) {
      const next = argmax(logits);
      tokens.push(next);
      logits = await cached.append([next]);
      // Recompute from nothing: the whole sequence in one run, no past.
      const recomputed = await sequence().append(tokens);
      expect(maxAbsDifference(logits, recomputed)).toBeLessThan(1e-5);
    }
    expect(cached.length).toBe(prompt.length + 4);
    expect(cached.modelRuns).toBe(5);
  });

  it('reads a long prompt in chunks (past > 0 and several new tokens per run) with the same result', async () => {
    const prompt = folder.tokenizer.encode('<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nCan you tell me the status of my account?<|im_end|>\n');
    const whole = sequence();
    const chunked = sequence(7);
    const wholeLogits = await whole.append(prompt);
    const chunkedLogits = await chunked.append(prompt);
    expect(chunked.modelRuns).toBe(Math.ceil(prompt.length / 7));
    expect(maxAbsDifference(wholeLogits, chunkedLogits)).toBeLessThan(1e-5);
  });

  it('keeps the cache in the worker: the same tokens as a caller-carried cache, and a token posts no keys or values', async () => {
    // The same model, minus openSequence: the sequence then carries the cache through the caller.
    const carriedModel: ModelHandle = { name: model.name, device: model.device, inputNames: model.inputNames, outputNames: model.outputNames, run: (feeds, context) => model.run(feeds, context) };
    const prompt = folder.tokenizer.encode('<|im_start|>user\nWhere is my order?<|im_end|>\n<|im_start|>assistant\n');
    const resident = sequence(5);
    const carried = new KvCacheSequence('stand-in', carriedModel, folder, {}, 5);
    let residentLogits = await resident.append(prompt);
    let carriedLogits = await carried.append(prompt);
    const residentTokens: number[] = [];
    const carriedTokens: number[] = [];
    const postedPerToken = { resident: [] as number[], carried: [] as number[] };
    for (let step = 0; step < 12; step++) {
      residentTokens.push(argmax(residentLogits));
      carriedTokens.push(argmax(carriedLogits));
      let before = runtime.transferStats().postedBytes;
      residentLogits = await resident.append([residentTokens[step]!]);
      postedPerToken.resident.push(runtime.transferStats().postedBytes - before);
      before = runtime.transferStats().postedBytes;
      carriedLogits = await carried.append([carriedTokens[step]!]);
      postedPerToken.carried.push(runtime.transferStats().postedBytes - before);
    }
    expect(residentTokens).toEqual(carriedTokens);
    expect(maxAbsDifference(residentLogits, carriedLogits)).toBe(0);
    // input_ids, position_ids (8 bytes each) and the attention mask (8 bytes per position so far):
    // nothing of the cache, whose keys and values the carried sequence posts every token.
    const cachedBytesPerPosition = folder.layers * 2 * folder.kvHeads * folder.headDim * 4;
    postedPerToken.resident.forEach((bytes, step) => expect(bytes).toBe(16 + 8 * (prompt.length + step + 1)));
    postedPerToken.carried.forEach((bytes, step) => expect(bytes).toBeGreaterThanOrEqual(cachedBytesPerPosition * (prompt.length + step)));
    expect(runtime.openSequences).toBeGreaterThan(0);
    await resident.close();
  });

  it('fails with a clear non-retryable error when the cache shape disagrees with the graph', async () => {
    const wrong = sequence(512, { ...folder, headDim: folder.headDim * 2 });
    const failure = await wrong.append([1, 2, 3]).catch((error: unknown) => error);
    expect(failure).toMatchObject({ engine: 'stand-in', code: 'bad_request', retryable: false });
    expect((failure as Error).message).toMatch(/past_key_values\.0\.key' dim 3 must be 16/);
  });
});
