import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelHandle } from '../../contracts';
import { createInferenceRuntime, type BatchRecord, type OnnxInferenceRuntime } from '../../runtime';
import { writeDecoderLlmStandIn } from '@switchboard/testing';
import type { LlmEvent } from '../llm-engine';
import { KvCacheSequence } from './kv-cache-sequence';
import { LocalOnnxLlm } from './local-onnx-llm';
import { readLlmModelFolder, type LlmModelFolder } from './llm-model-folder';

jest.setTimeout(60_000);

/**
 * Continuous batching of the local LLM's decode steps: calls decoding at once share each step's
 * run, their caches of different lengths left-padded and masked. Each call must get exactly the
 * tokens it gets alone.
 */
const quiet = { log: () => undefined, warn: () => undefined };

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if ((values[i] as number) > (values[best] as number)) best = i;
  return best;
}

const PROMPTS = [
  '<|im_start|>user\nWhere is my order?<|im_end|>\n<|im_start|>assistant\n',
  '<|im_start|>system\nYou answer for a bakery.<|im_end|>\n<|im_start|>user\nWhat time do you open tomorrow morning?<|im_end|>\n<|im_start|>assistant\n',
  '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
  '<|im_start|>user\nI would like to change the delivery address of order 4567, please.<|im_end|>\n<|im_start|>assistant\n',
];

describe('LLM decode steps batched across calls (stand-in export, real onnxruntime)', () => {
  let dir: string;
  let folder: LlmModelFolder;
  let runtime: OnnxInferenceRuntime;
  let model: ModelHandle;
  let llm: LocalOnnxLlm;
  const batches: BatchRecord[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'llm-batched-'));
    await writeDecoderLlmStandIn(join(dir, 'qwen'));
    folder = await readLlmModelFolder(join(dir, 'qwen'), 'stand-in');
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: quiet, onBatch: (batch) => void batches.push(batch) });
    llm = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'qwen') });
    // The same name returns the engine's handle, loaded with its step batching.
    model = await runtime.loadModel({ name: 'local-llm:qwen', path: folder.modelPath });
  });

  afterAll(async () => {
    await runtime?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function greedy(prompt: readonly number[], tokens: number): Promise<number[]> {
    const sequence = new KvCacheSequence('stand-in', model, folder, {}, 512);
    try {
      let logits = await sequence.append(prompt);
      const generated: number[] = [];
      for (let step = 0; step < tokens; step++) {
        const next = argmax(logits);
        generated.push(next);
        logits = await sequence.append([next]);
      }
      return generated;
    } finally {
      await sequence.close();
    }
  }

  it('gives every call the tokens it gets alone, token for token, while their steps share runs', async () => {
    const prompts = PROMPTS.map((text) => folder.tokenizer.encode(text));
    // Different lengths: joining them needs the padding.
    expect(new Set(prompts.map((prompt) => prompt.length)).size).toBe(prompts.length);
    const alone: number[][] = [];
    for (const prompt of prompts) alone.push(await greedy(prompt, 12));

    batches.length = 0;
    const together = await Promise.all(prompts.map((prompt) => greedy(prompt, 12)));
    expect(together).toEqual(alone);

    const runs = batches.filter((batch) => batch.model === 'local-llm:qwen');
    // Every prompt and token ran once: 4 prefills + 4 x 12 steps of one row each.
    expect(runs.reduce((sum, batch) => sum + batch.rows, 0)).toBe(prompts.length * 13);
    // Calls whose caches differ in length shared runs: far fewer runs than steps.
    expect(Math.max(...runs.map((batch) => batch.rows))).toBe(prompts.length);
    expect(runs.length).toBeLessThan(prompts.length * 13 - 30);
    expect(runtime.openSequences).toBe(0);
  });

  it('streams the same replies to concurrent chats as to each alone (the engine, end to end)', async () => {
    const ask = (content: string, callId: string) => ({ callId, messages: [{ role: 'user' as const, content }] });
    const collect = async (events: AsyncIterable<LlmEvent>): Promise<string> => {
      let text = '';
      for await (const event of events) if (event.type === 'text') text += event.delta;
      return text;
    };
    const questions = ['Where is my order?', 'What time do you open tomorrow morning?', 'Hi', 'Can I change my delivery address?'];
    const alone: string[] = [];
    for (const [index, question] of questions.entries()) alone.push(await collect(llm.stream(ask(question, `alone-${index}`))));
    batches.length = 0;
    const together = await Promise.all(questions.map((question, index) => collect(llm.stream(ask(question, `together-${index}`)))));
    expect(together).toEqual(alone);
    expect(alone.every((text) => text.length > 0)).toBe(true);
    expect(Math.max(...batches.filter((batch) => batch.model === 'local-llm:qwen').map((batch) => batch.rows))).toBeGreaterThan(1);
  });
});
