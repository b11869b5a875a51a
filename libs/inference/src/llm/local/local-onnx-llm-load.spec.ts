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

async function editJson(path: string, edit: (json: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  await writeFile(path, JSON.stringify(edit(JSON.parse(await readFile(path, 'utf8')))));
}

describe('LocalOnnxLlm.load: chat templates from the model folder, and folders it refuses', () => {
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

  it("renders a non-ChatML (Llama 3 header) template from the template itself, with the folder's bos_token", async () => {
    await writeDecoderLlmStandIn(join(dir, 'llama'), { chatTemplate: 'llama-3' });
    await editJson(join(dir, 'llama', 'tokenizer_config.json'), (config) => ({ ...config, bos_token: '<|endoftext|>' }));
    const llama = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'llama') });
    expect(llama.renderPrompt([{ role: 'user', content: 'hi' }])).toBe('<|endoftext|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n');
    await expect(collect(llama.stream(ask('hi', { tools: [LOOKUP_ORDER] })))).rejects.toThrow(/no tool support/);
  });

  it('reads chat_template.jinja over tokenizer_config.json, and refuses a folder with neither, naming both', async () => {
    const folder = join(dir, 'jinja');
    await writeDecoderLlmStandIn(folder);
    await writeFile(join(folder, 'chat_template.jinja'), "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{{ '<|im_start|>assistant\\n' }}");
    const fromFile = await LocalOnnxLlm.load({ runtime, modelDir: folder });
    expect(fromFile.renderPrompt([{ role: 'user', content: 'hi' }])).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');

    await rm(join(folder, 'chat_template.jinja'));
    await editJson(join(folder, 'tokenizer_config.json'), ({ chat_template: _dropped, ...config }) => config);
    const failure = await LocalOnnxLlm.load({ runtime, modelDir: folder }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure).toMatchObject({ code: 'model_missing', retryable: false });
    expect((failure as Error).message).toMatch(/has no chat template \(no "chat_template" in tokenizer_config.json and no chat_template.jinja\)/);
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
    await editJson(join(dir, 'mismatch', 'config.json'), (config) => ({ ...config, num_hidden_layers: 3 }));
    await expect(LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'mismatch') })).rejects.toThrow(/missing inputs \[past_key_values\.2\.key, past_key_values\.2\.value\]/);
    await expect(LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'nowhere') })).rejects.toMatchObject({ code: 'model_missing', retryable: false });
  });
});
