import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../contracts';
import { LlmTokenizer } from './llm-tokenizer';

/** The config.json fields a decoder-only export needs (Qwen2, Llama, SmolLM2 and similar). */
interface DecoderConfigJson {
  num_hidden_layers?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  hidden_size?: number;
  head_dim?: number;
  max_position_embeddings?: number;
  vocab_size?: number;
  eos_token_id?: number | number[] | null;
}

interface GenerationConfigJson {
  eos_token_id?: number | number[] | null;
  top_k?: number;
  top_p?: number;
}

interface TokenizerConfigJson {
  chat_template?: string | Array<{ name: string; template: string }>;
  eos_token?: string | { content?: string } | null;
}

export interface LlmModelFolder {
  folder: string;
  modelPath: string;
  layers: number;
  kvHeads: number;
  headDim: number;
  /** Longest sequence (prompt + reply) the model takes. */
  contextTokens: number;
  tokenizer: LlmTokenizer;
  chatTemplate: string | undefined;
  /** Every id that ends a reply: config, generation_config and tokenizer_config's eos_token. */
  endTokenIds: ReadonlySet<number>;
  /** generation_config's sampling limits (0 and 1: off). */
  topK: number;
  topP: number;
}

/**
 * Reads a decoder-only model in the Hugging Face ONNX layout that optimum and onnx-community
 * publish: config.json, generation_config.json (optional), tokenizer.json,
 * tokenizer_config.json (chat template; or chat_template.jinja) and onnx/model{suffix}.onnx
 * (with its .onnx_data beside it for models over 2 GB, which onnxruntime opens itself).
 */
export async function readLlmModelFolder(folder: string, engine: string, fileSuffix = ''): Promise<LlmModelFolder> {
  const config = await readJson<DecoderConfigJson>(folder, 'config.json', engine);
  const generation = existsSync(join(folder, 'generation_config.json')) ? await readJson<GenerationConfigJson>(folder, 'generation_config.json', engine) : {};
  const tokenizerConfig = existsSync(join(folder, 'tokenizer_config.json')) ? await readJson<TokenizerConfigJson>(folder, 'tokenizer_config.json', engine) : {};
  const tokenizer = LlmTokenizer.fromJson(await readText(folder, 'tokenizer.json', engine), engine);

  const modelPath = join(folder, 'onnx', `model${fileSuffix}.onnx`);
  if (!existsSync(modelPath)) {
    const present = existsSync(join(folder, 'onnx')) ? (await readdir(join(folder, 'onnx'))).filter((file) => file.endsWith('.onnx')) : [];
    throw new EngineError(engine, 'model_missing', `${engine}: ${modelPath} not found (onnx/ has: ${present.join(', ') || 'nothing'}); a decoder-only export with past_key_values is expected`, false);
  }

  const heads = positive(config.num_attention_heads, 'num_attention_heads', engine);
  const headDim = config.head_dim ?? positive(config.hidden_size, 'hidden_size', engine) / heads;
  const endTokenIds = new Set<number>([...idList(config.eos_token_id), ...idList(generation.eos_token_id)]);
  const eosToken = typeof tokenizerConfig.eos_token === 'string' ? tokenizerConfig.eos_token : tokenizerConfig.eos_token?.content;
  const eosFromTokenizer = eosToken === undefined ? undefined : tokenizer.idOf(eosToken);
  if (eosFromTokenizer !== undefined) endTokenIds.add(eosFromTokenizer);
  if (endTokenIds.size === 0) throw new EngineError(engine, 'model_missing', `${engine}: no eos_token_id in config.json or generation_config.json`, false);

  return {
    folder,
    modelPath,
    layers: positive(config.num_hidden_layers, 'num_hidden_layers', engine),
    kvHeads: positive(config.num_key_value_heads ?? heads, 'num_key_value_heads', engine),
    headDim: positive(headDim, 'head_dim (or hidden_size / num_attention_heads)', engine),
    contextTokens: positive(config.max_position_embeddings, 'max_position_embeddings', engine),
    tokenizer,
    chatTemplate: await chatTemplateOf(folder, tokenizerConfig, engine),
    endTokenIds,
    topK: generation.top_k ?? 0,
    topP: generation.top_p ?? 1,
  };
}

/**
 * tokenizer_config.json's template, else chat_template.jinja. Of a named list, 'tool_use' when
 * there is one: it is the variant that shows the tool format (the renderer handles both cases).
 */
async function chatTemplateOf(folder: string, tokenizerConfig: TokenizerConfigJson, engine: string): Promise<string | undefined> {
  const template = tokenizerConfig.chat_template;
  if (typeof template === 'string') return template;
  if (Array.isArray(template)) return (template.find((entry) => entry.name === 'tool_use') ?? template.find((entry) => entry.name === 'default'))?.template;
  if (existsSync(join(folder, 'chat_template.jinja'))) return readText(folder, 'chat_template.jinja', engine);
  return undefined;
}

function idList(value: number | number[] | null | undefined): number[] {
  if (value === null || value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((id) => Number.isInteger(id) && id >= 0);
}

function positive(value: number | undefined, field: string, engine: string): number {
  if (value === undefined || !Number.isInteger(value) || value < 1) {
    throw new EngineError(engine, 'model_missing', `${engine}: config.json needs a positive integer ${field}, got ${String(value)}`, false);
  }
  return value;
}

async function readText(folder: string, file: string, engine: string): Promise<string> {
  try {
    return await readFile(join(folder, file), 'utf8');
  } catch (cause) {
    throw new EngineError(engine, 'model_missing', `${engine}: cannot read ${join(folder, file)}`, false, { cause });
  }
}

async function readJson<T>(folder: string, file: string, engine: string): Promise<T> {
  const text = await readText(folder, file, engine);
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new EngineError(engine, 'model_missing', `${engine}: ${file} is not valid JSON`, false, { cause });
  }
}
