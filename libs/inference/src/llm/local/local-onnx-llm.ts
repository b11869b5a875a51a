import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { EngineError, type InferenceRuntime, type ModelHandle, type ModelLoadSpec } from '../../contracts';
import type { ChatMessage, LlmEngine, LlmEvent, LlmRequest, ToolDefinition } from '../llm-engine';
import { ModelChatTemplate } from './chat-template';
import { IncrementalTextDecoder } from './incremental-text-decoder';
import { cancelled, KvCacheSequence } from './kv-cache-sequence';
import { readLlmModelFolder, type LlmModelFolder } from './llm-model-folder';
import { TokenSampler } from './token-sampler';
import { ToolCallStreamParser, type ToolCallParserOutput } from './tool-call-stream-parser';

export interface LocalOnnxLlmOptions {
  runtime: InferenceRuntime;
  /** A decoder-only model folder in the Hugging Face ONNX layout (see readLlmModelFolder). */
  modelDir: string;
  /** Engine and runtime model name; default 'local-llm:<folder name>'. */
  name?: string;
  /** ONNX file variant, e.g. '_quantized' for onnx/model_quantized.onnx; default '' (model.onnx). */
  fileSuffix?: string;
  /** Reply length when a request names none; default 512. */
  maxTokens?: number;
  /** Temperature when a request names none; default 0 (greedy: the same prompt, the same reply). */
  temperature?: number;
  /** Sampling seed (temperature > 0); default a fresh random seed per request. */
  seed?: number;
  /** Cap on prompt + reply tokens below the model's max_position_embeddings (bounds KV cache memory). */
  contextTokens?: number;
  /** Prompt tokens per model run while reading the prompt; default 256. */
  prefillChunkTokens?: number;
  /** Most calls' decode steps run as one batch (default 16; 1: every call's tokens run alone). */
  decodeBatchRows?: number;
}

/**
 * A local decoder-only LLM (Qwen2.5, SmolLM2 and other chat models exported by optimum /
 * onnx-community) behind the same LlmEngine interface as the remote client. The prompt is
 * rendered from the model's own Jinja chat template (ModelChatTemplate), encoded with its
 * tokenizer.json, and decoded token by token on the injected InferenceRuntime (worker threads)
 * with a KV cache; text streams as it decodes, and tool calls in the markup the template writes
 * them in (`<tool_call>` spans for Qwen2.5) become tool_call events.
 */
export class LocalOnnxLlm implements LlmEngine {
  private constructor(
    readonly name: string,
    private readonly folder: LlmModelFolder,
    private readonly model: ModelHandle,
    private readonly template: ModelChatTemplate,
    private readonly defaults: { maxTokens: number; temperature: number; seed: number | undefined; contextTokens: number; prefillChunkTokens: number },
  ) {}

  static async load(options: LocalOnnxLlmOptions): Promise<LocalOnnxLlm> {
    const name = options.name ?? `local-llm:${basename(options.modelDir)}`;
    const maxTokens = positiveInteger(options.maxTokens ?? 512, 'maxTokens');
    const temperature = options.temperature ?? 0;
    if (!Number.isFinite(temperature) || temperature < 0) throw new RangeError(`temperature must be a finite number >= 0, got ${temperature}`);
    const prefillChunkTokens = positiveInteger(options.prefillChunkTokens ?? 256, 'prefillChunkTokens');
    const folder = await readLlmModelFolder(options.modelDir, name, options.fileSuffix);
    const template = ModelChatTemplate.load(name, options.modelDir, folder.chatTemplate, folder.templateTokens);
    const decodeBatchRows = positiveInteger(options.decodeBatchRows ?? 16, 'decodeBatchRows');
    // Whole runs never share a batch (each call's cache has its own length), but the steps of
    // calls decoding at once do: continuous batching, see llmStepBatching.
    const model = await options.runtime.loadModel({ name, path: folder.modelPath, maxBatchRows: 1, batchingFor: llmStepBatching(decodeBatchRows) });
    checkSignature(name, model, folder.layers);
    const contextTokens = Math.min(folder.contextTokens, positiveInteger(options.contextTokens ?? folder.contextTokens, 'contextTokens'));
    return new LocalOnnxLlm(name, folder, model, template, {
      maxTokens,
      temperature,
      seed: options.seed,
      contextTokens,
      prefillChunkTokens,
    });
  }

  /** The prompt text the model reads for this conversation (its chat template's, generation prompt included). */
  renderPrompt(messages: readonly ChatMessage[], tools?: readonly ToolDefinition[]): string {
    return this.template.render(messages, tools);
  }

  /** The prompt's token ids: `usage.inputTokens` counts these. */
  encodePrompt(messages: readonly ChatMessage[], tools?: readonly ToolDefinition[]): number[] {
    return this.folder.tokenizer.encode(this.renderPrompt(messages, tools));
  }

  stream(request: LlmRequest): AsyncIterable<LlmEvent> {
    return this.generate(request);
  }

  private async *generate(request: LlmRequest): AsyncGenerator<LlmEvent> {
    const startedAt = performance.now();
    const { maxTokens, temperature } = this.requestSettings(request);
    const promptIds = this.encodePrompt(request.messages, request.tools);
    const room = this.defaults.contextTokens - promptIds.length;
    if (room < 1) {
      throw new EngineError(this.name, 'bad_request', `${this.name}: the prompt is ${promptIds.length} tokens; the model takes ${this.defaults.contextTokens} in all`, false);
    }
    const signal = request.signal;
    const sequence = new KvCacheSequence(this.name, this.model, this.folder, { callId: request.callId, signal }, this.defaults.prefillChunkTokens);
    const { tokenizer, endTokenIds } = this.folder;
    const decoder = new IncrementalTextDecoder((id) => tokenizer.bytesOf(id), (id) => tokenizer.isSpecial(id));
    const parser = new ToolCallStreamParser(this.name, this.template.toolCallMarkup ?? null, temperature > 0);
    const sampler = new TokenSampler(tokenizer.vocabSize, {
      temperature,
      topK: this.folder.topK,
      topP: this.folder.topP,
      seed: this.defaults.seed ?? randomBytes(4).readUInt32LE(0),
    });
    let firstResultMs: number | undefined;
    const events = (outputs: ToolCallParserOutput[]): LlmEvent[] =>
      outputs.map((output) => {
        firstResultMs ??= performance.now() - startedAt;
        return output.type === 'text' ? output : { type: 'tool_call', id: toolCallId(), name: output.name, arguments: output.arguments };
      });

    try {
      let logits = await sequence.append(promptIds);
      let outputTokens = 0;
      let finishReason: 'stop' | 'length';
      for (;;) {
        if (signal?.aborted) throw cancelled(this.name);
        const next = sampler.pick(logits);
        outputTokens += 1;
        if (endTokenIds.has(next)) {
          finishReason = 'stop';
          break;
        }
        yield* events(parser.push(decoder.push(next)));
        if (outputTokens >= Math.min(maxTokens, room)) {
          finishReason = 'length';
          break;
        }
        logits = await sequence.append([next]);
      }
      yield* events([...parser.push(decoder.end()), ...parser.end()]);
      yield {
        type: 'done',
        finishReason: finishReason === 'stop' && parser.toolCallCount > 0 ? 'tool_calls' : finishReason,
        usage: { inputTokens: promptIds.length, cachedInputTokens: 0, outputTokens },
        timings: { queueWaitMs: sequence.queueWaitMs, runMs: sequence.runMs, firstResultMs, totalMs: performance.now() - startedAt },
      };
    } finally {
      // The worker's copy of the cache goes with the request: answered, failed or abandoned.
      await sequence.close();
    }
  }

  private requestSettings(request: LlmRequest): { maxTokens: number; temperature: number } {
    const maxTokens = request.maxTokens ?? this.defaults.maxTokens;
    const temperature = request.temperature ?? this.defaults.temperature;
    if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new EngineError(this.name, 'bad_request', `${this.name}: maxTokens must be a positive integer, got ${maxTokens}`, false);
    if (!Number.isFinite(temperature) || temperature < 0) throw new EngineError(this.name, 'bad_request', `${this.name}: temperature must be >= 0, got ${temperature}`, false);
    return { maxTokens, temperature };
  }
}

/** The graph must take exactly the inputs a KV-cache decoder export has, for config.json's layer count. */
/**
 * Every input and output has the batch first. Caches of different lengths join left-padded: zeros
 * in front of the shorter ones' keys and values, masked by attention_mask (0 there), as batched
 * generation pads prompts. Only when the graph takes position_ids: a graph without it numbers
 * positions from the cache length, which padding would shift; its steps join at equal lengths.
 */
export function llmStepBatching(maxRows: number): NonNullable<ModelLoadSpec['batchingFor']> {
  return (signature) => {
    const leftPadded: Record<string, number> = {};
    if (signature.inputs.includes('position_ids')) {
      for (const input of signature.inputs) if (input.startsWith('past_key_values.')) leftPadded[input] = 2;
      if (signature.inputs.includes('attention_mask')) leftPadded['attention_mask'] = 1;
    }
    return {
      batchAxes: { inputs: Object.fromEntries(signature.inputs.map((input) => [input, 0])), outputs: Object.fromEntries(signature.outputs.map((output) => [output, 0])) },
      sequenceBatching: { maxRows, leftPadded },
    };
  };
}

function checkSignature(engine: string, model: ModelHandle, layers: number): void {
  const required = ['input_ids', 'attention_mask'];
  for (let layer = 0; layer < layers; layer++) required.push(`past_key_values.${layer}.key`, `past_key_values.${layer}.value`);
  const known = new Set([...required, 'position_ids']);
  const missing = required.filter((name) => !model.inputNames.includes(name));
  const unexpected = model.inputNames.filter((name) => !known.has(name));
  const outputs = ['logits', ...Array.from({ length: layers }, (_, layer) => [`present.${layer}.key`, `present.${layer}.value`]).flat()];
  const missingOutputs = outputs.filter((name) => !model.outputNames.includes(name));
  if (missing.length > 0 || unexpected.length > 0 || missingOutputs.length > 0) {
    throw new EngineError(
      engine,
      'model_missing',
      `${engine}: the ONNX graph is not a decoder-only export with past_key_values for num_hidden_layers=${layers}: ` +
        `missing inputs [${missing.join(', ')}], unexpected inputs [${unexpected.join(', ')}], missing outputs [${missingOutputs.join(', ')}]`,
      false,
    );
  }
}

function toolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
