import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError, type ComputeUsageEntry } from '../../contracts';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../../runtime';
import { DECODER_LLM_TOOL_REPLY, writeDecoderLlmStandIn } from '@switchboard/testing';
import type { ChatMessage, LlmEvent, LlmRequest, ToolDefinition } from '../llm-engine';
import { LocalOnnxLlm } from './local-onnx-llm';
import { LlmTokenizer } from './llm-tokenizer';

const LOOKUP_ORDER: ToolDefinition = {
  name: 'lookup_order',
  description: 'Look up an order by its number',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
};

const quiet = { log: () => undefined, warn: () => undefined };

async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const collected: LlmEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

function textOf(events: readonly LlmEvent[]): string {
  return events.map((event) => (event.type === 'text' ? event.delta : '')).join('');
}

function doneOf(events: readonly LlmEvent[]): Extract<LlmEvent, { type: 'done' }> {
  const last = events[events.length - 1];
  if (last?.type !== 'done') throw new Error(`the last event is ${JSON.stringify(last)}, not done`);
  return last;
}

function ask(content: string, extra: Partial<LlmRequest> = {}): LlmRequest {
  return { callId: 'call-1', messages: [{ role: 'user', content }], ...extra };
}

describe('LocalOnnxLlm on the stand-in decoder-only model (real onnxruntime, worker threads)', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;
  let llm: LocalOnnxLlm;
  const usage: ComputeUsageEntry[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-llm-'));
    await writeDecoderLlmStandIn(join(dir, 'qwen'));
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: quiet, usageSink: { record: (entry) => usage.push(entry) } });
    llm = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'qwen'), prefillChunkTokens: 64 });
  });

  afterAll(async () => {
    await runtime?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the export with exactly the decoder-with-past inputs and outputs', async () => {
    const model = await runtime.loadModel({ name: 'local-llm:qwen', path: join(dir, 'qwen', 'onnx', 'model.onnx'), maxBatchRows: 1 });
    const past = [0, 1].flatMap((layer) => [`past_key_values.${layer}.key`, `past_key_values.${layer}.value`]);
    expect(model.inputNames).toEqual(['input_ids', 'attention_mask', 'position_ids', ...past]);
    expect(model.outputNames).toEqual(['logits', ...[0, 1].flatMap((layer) => [`present.${layer}.key`, `present.${layer}.value`])]);
  });

  it('streams the same text for the same prompt and different text for another, ending with stop', async () => {
    const first = await collect(llm.stream(ask('Hi, I am calling about my order.')));
    const again = await collect(llm.stream(ask('Hi, I am calling about my order.')));
    const other = await collect(llm.stream(ask('What time do you open tomorrow morning?')));
    expect(textOf(first).length).toBeGreaterThan(0);
    expect(first.filter((event) => event.type === 'text').length).toBeGreaterThan(1); // streamed in pieces
    expect(textOf(again)).toBe(textOf(first));
    expect(textOf(other)).not.toBe(textOf(first));
    expect(doneOf(first).finishReason).toBe('stop');
    expect(first.some((event) => event.type === 'tool_call')).toBe(false);
  });

  it('counts prompt and reply tokens, and reports timings summed from the model runs', async () => {
    usage.length = 0;
    const request = ask('Can you tell me the status of my account?', { callId: 'usage-call' });
    const events = await collect(llm.stream(request));
    const done = doneOf(events);
    const promptTokens = llm.encodePrompt(request.messages).length;
    expect(done.usage).toEqual({ inputTokens: promptTokens, cachedInputTokens: 0, outputTokens: expect.any(Number) });
    const outputTokens = done.usage!.outputTokens;
    // One run per chunk of 64 prompt tokens, then one per reply token after the first; the
    // end-of-turn token counts as output (as vLLM counts it) but is never run.
    const runs = usage.filter((entry) => entry.callId === 'usage-call');
    expect(runs).toHaveLength(Math.ceil(promptTokens / 64) + outputTokens - 1);
    expect(runs.every((entry) => entry.model === 'local-llm:qwen' && entry.rows === 1)).toBe(true);
    const { timings } = done;
    expect(timings.runMs).toBeGreaterThan(0);
    expect(timings.runMs).toBeCloseTo(runs.reduce((sum, entry) => sum + entry.seconds * 1000, 0), 3);
    expect(timings.queueWaitMs).toBeGreaterThanOrEqual(0);
    expect(timings.firstResultMs).toBeGreaterThan(0);
    expect(timings.totalMs).toBeGreaterThanOrEqual(timings.firstResultMs!);
  });

  it('stops at maxTokens with finishReason length', async () => {
    const full = await collect(llm.stream(ask('Hi, I am calling about my order.')));
    expect(doneOf(full).usage!.outputTokens).toBeGreaterThan(2);
    const cut = await collect(llm.stream(ask('Hi, I am calling about my order.', { maxTokens: 2 })));
    expect(doneOf(cut).finishReason).toBe('length');
    expect(doneOf(cut).usage!.outputTokens).toBe(2);
    expect(textOf(full).startsWith(textOf(cut))).toBe(true);
  });

  it('turns a <tool_call> span into a tool_call event: text around it streams, the markup never does', async () => {
    const events = await collect(llm.stream(ask('Where is my order 4567?', { tools: [LOOKUP_ORDER] })));
    const calls = events.filter((event) => event.type === 'tool_call');
    expect(calls).toEqual([{ type: 'tool_call', id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'lookup_order', arguments: '{"order_id":"4567"}' }]);
    expect(textOf(events)).toBe('Let me check that.');
    expect(events.findIndex((event) => event.type === 'tool_call')).toBeGreaterThan(events.findIndex((event) => event.type === 'text'));
    const done = doneOf(events);
    expect(done.finishReason).toBe('tool_calls');
    const tokenizer = LlmTokenizer.fromJson(await readFile(join(dir, 'qwen', 'tokenizer.json'), 'utf8'), 'test');
    // The scripted reply's tokens plus the end-of-turn token.
    expect(done.usage!.outputTokens).toBe(tokenizer.encode(DECODER_LLM_TOOL_REPLY).length + 1);
  });

  it('serves concurrent calls, each with its own cache, exactly as it serves them one at a time', async () => {
    const prompts = ['Hi, I am calling about my order.', 'What time do you open tomorrow morning?', 'Please transfer me to billing.'];
    const alone: string[] = [];
    for (const prompt of prompts) alone.push(textOf(await collect(llm.stream(ask(prompt)))));
    const together = await Promise.all(prompts.map(async (prompt, index) => textOf(await collect(llm.stream(ask(prompt, { callId: `call-${index}` }))))));
    expect(together).toEqual(alone);
    // Each request's cache lived in the worker and went with the request.
    expect(runtime.openSequences).toBe(0);
  });

  it('renders earlier tool calls and results the Qwen2.5 way, and the prompt stays ChatML', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are the Acme support line.' },
      { role: 'user', content: 'Where is order 4567?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"4567"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
    ];
    const prompt = llm.renderPrompt(messages, [LOOKUP_ORDER]);
    expect(prompt.startsWith('<|im_start|>system\nYou are the Acme support line.\n\n# Tools\n')).toBe(true);
    expect(prompt).toContain('<|im_start|>assistant\n<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "4567"}}\n</tool_call><|im_end|>\n');
    expect(prompt.endsWith('<|im_start|>user\n<tool_response>\n{"status":"shipped"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n')).toBe(true);
  });

  it('aborting mid-stream rejects with a non-retryable cancelled EngineError and stops generating', async () => {
    const controller = new AbortController();
    const seen: LlmEvent[] = [];
    let failure: unknown;
    try {
      for await (const event of llm.stream(ask('Hi, I am calling about my order.', { signal: controller.signal }))) {
        seen.push(event);
        controller.abort();
      }
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure).toMatchObject({ engine: 'local-llm:qwen', code: 'cancelled', retryable: false });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.type).toBe('text');

    const before = new AbortController();
    before.abort();
    await expect(collect(llm.stream(ask('hello', { signal: before.signal })))).rejects.toMatchObject({ code: 'cancelled' });
    // A cancelled request frees the worker's copy of its cache too.
    expect(runtime.openSequences).toBe(0);
  });

  it('samples with a seed when temperature > 0: same seed, same reply', async () => {
    const seeded = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'qwen'), seed: 7, name: 'local-llm:qwen' });
    const request = ask('Hi, I am calling about my order.', { temperature: 1.5, maxTokens: 12 });
    const first = await collect(seeded.stream(request));
    expect(textOf(await collect(seeded.stream(request)))).toBe(textOf(first));
    expect(['stop', 'length']).toContain(doneOf(first).finishReason);
  });

  it('refuses bad requests with non-retryable bad_request errors before running the model', async () => {
    await expect(collect(llm.stream({ callId: 'c', messages: [] }))).rejects.toMatchObject({ code: 'bad_request', retryable: false });
    await expect(collect(llm.stream(ask('hi', { maxTokens: 0 })))).rejects.toMatchObject({ code: 'bad_request' });
    await expect(collect(llm.stream(ask('hi', { tools: [{ name: 'bad name!', parameters: {} }] })))).rejects.toThrow(/tool name/);
    const long = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'qwen'), contextTokens: 40, name: 'local-llm:qwen' });
    await expect(collect(long.stream(ask('hi '.repeat(50))))).rejects.toThrow(/the prompt is \d+ tokens; the model takes 40/);
  });
});
