import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../contracts';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../../runtime';
import { writeDecoderLlmStandIn } from '@switchboard/testing';
import type { LlmEvent, LlmRequest, ToolDefinition } from '../llm-engine';
import { LocalOnnxLlm } from './local-onnx-llm';

const LOOKUP_ORDER: ToolDefinition = { name: 'lookup_order', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } };

async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const collected: LlmEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

function ask(content: string, extra: Partial<LlmRequest> = {}): LlmRequest {
  return { callId: 'call-1', messages: [{ role: 'user', content }], ...extra };
}

describe('LocalOnnxLlm.load: chat templates and model folders it refuses', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-llm-load-'));
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log: () => undefined, warn: () => undefined } });
  });

  afterAll(async () => {
    await runtime?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('rejects a non-ChatML chat template at load with a clear bad_request', async () => {
    await writeDecoderLlmStandIn(join(dir, 'llama'), { chatTemplate: 'llama-3' });
    const failure = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'llama') }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure).toMatchObject({ code: 'bad_request', retryable: false });
    expect((failure as Error).message).toMatch(/Llama 3 chat template is not supported.*ChatML/);
  });

  it('serves a ChatML template without tool support (SmolLM2) and refuses tools on it', async () => {
    await writeDecoderLlmStandIn(join(dir, 'smol'), { chatTemplate: 'smollm2' });
    const smol = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'smol') });
    expect(smol.renderPrompt([{ role: 'user', content: 'hi' }])).toBe(
      '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect((await collect(smol.stream(ask('hi')))).at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' });
    await expect(collect(smol.stream(ask('hi', { tools: [LOOKUP_ORDER] })))).rejects.toThrow(/no tool support/);
  });

  it('refuses a folder whose config.json disagrees with the graph, naming what is missing', async () => {
    await writeDecoderLlmStandIn(join(dir, 'mismatch'));
    const configPath = join(dir, 'mismatch', 'config.json');
    const config = JSON.parse(await readFile(configPath, 'utf8'));
    await writeFile(configPath, JSON.stringify({ ...config, num_hidden_layers: 3 }));
    await expect(LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'mismatch') })).rejects.toThrow(/missing inputs \[past_key_values\.2\.key, past_key_values\.2\.value\]/);
    await expect(LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'nowhere') })).rejects.toMatchObject({ code: 'model_missing', retryable: false });
  });
});
