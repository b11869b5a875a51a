import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInferenceRuntime, LocalOnnxLlm, type LlmEvent, modelFolder, ModelRegistry, type OnnxInferenceRuntime } from '@switchboard/inference';
import { DECODER_LLM_TOOL_REPLY } from '@switchboard/testing';
import { pullLlmStandIn } from './pull-stand-in.test-support';

jest.setTimeout(60_000);

const NAME = 'qwen2.5-0.5b-instruct';

async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const collected: LlmEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

/**
 * The catalog's local LLM as an operator gets it: `npm run models -- pull qwen2.5-0.5b-instruct
 * --precision int8` (the real command, from a Hub-like server serving the stand-in's files at the
 * catalog's paths), then loaded by the local LLM engine from MODELS_DIR with
 * INFERENCE_MODEL_PRECISION=qwen2.5-0.5b-instruct=int8, the setting the docs give for CPUs. The
 * stand-in has Qwen2.5's signature and tokenizer layout and Qwen2.5-0.5B-Instruct's own chat template,
 * rendered with @huggingface/jinja, so what runs here is what runs on the real weights.
 */
describe('the catalog LLM, pulled and run by the local LLM engine (stand-in weights)', () => {
  let modelsDir: string;
  let runtime: OnnxInferenceRuntime;

  beforeAll(async () => {
    modelsDir = await mkdtemp(join(tmpdir(), 'switchboard-llm-pull-'));
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, modelsDir, modelPrecisions: { [NAME]: 'int8' }, logger: { log: () => undefined, warn: () => undefined } });
  });

  afterAll(async () => {
    await runtime?.close();
    await rm(modelsDir, { recursive: true, force: true });
  });

  it('pulls every catalog file and the int8 variant, and the registry reports it installed', async () => {
    const pulled = await pullLlmStandIn(modelsDir, { int8: true });
    expect(pulled).toMatchObject({ code: 0 });
    const manifest = JSON.parse(await readFile(join(modelFolder(modelsDir, NAME), 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: NAME, task: 'llm', source: { repo: 'onnx-community/Qwen2.5-0.5B-Instruct' } });
    expect(manifest).not.toHaveProperty('sampleRate');
    expect(manifest.files.map((file: { path: string }) => file.path).sort()).toEqual(
      ['config.json', 'generation_config.json', 'onnx/model.onnx', 'onnx/model_int8.onnx', 'tokenizer.json', 'tokenizer_config.json'].sort(),
    );
    const status = (await new ModelRegistry({ modelsDir }).status()).find((model) => model.name === NAME);
    expect(status).toMatchObject({ task: 'llm', state: 'installed' });
  });

  it('loads the pulled folder on its int8 file, renders its chat template and parses its <tool_call> replies', async () => {
    const llm = await LocalOnnxLlm.load({ runtime, modelDir: modelFolder(modelsDir, NAME) });
    expect(runtime.providerReport().precisions).toMatchObject({ [`local-llm:${NAME}`]: 'int8' });
    expect(llm.renderPrompt([{ role: 'user', content: 'Hi' }])).toBe('<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');

    const tools = [{ name: 'lookup_order', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }];
    const events = await collect(llm.stream({ callId: 'call-1', messages: [{ role: 'user', content: 'Where is order 4567?' }], tools }));
    const text = DECODER_LLM_TOOL_REPLY.slice(0, DECODER_LLM_TOOL_REPLY.indexOf('<tool_call>'));
    expect(events.filter((event) => event.type === 'text').map((event) => (event.type === 'text' ? event.delta : '')).join('')).toBe(text);
    expect(events.filter((event) => event.type === 'tool_call')).toEqual([{ type: 'tool_call', id: expect.stringMatching(/^call_/), name: 'lookup_order', arguments: '{"order_id":"4567"}' }]);
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
  });
});
