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

type SpecialTokenJson = string | { content?: string } | null;

interface TokenizerConfigJson {
  chat_template?: string | Array<{ name: string; template: string }>;
  bos_token?: SpecialTokenJson;
  eos_token?: SpecialTokenJson;
}

/** The model's own Jinja chat template, as the folder carries it (see chatTemplateOf). */
export interface ChatTemplateSource {
  /** The template for conversations without tools (transformers' 'default'). */
  text: string;
  /** A separate 'tool_use' template, which transformers picks when tools are given; else `text` serves both. */
  toolUseText: string | undefined;
  /** Where it was read from, for messages that name it. */
  file: 'tokenizer_config.json' | 'chat_template.jinja';
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
  /** undefined when the folder has none: the engine then refuses the model (LocalOnnxLlm.load). */
  chatTemplate: ChatTemplateSource | undefined;
  /** tokenizer_config.json's bos_token and eos_token text, which templates may write into the prompt. */
  templateTokens: { bos_token?: string; eos_token?: string };
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
  const eosToken = tokenText(tokenizerConfig.eos_token);
  const bosToken = tokenText(tokenizerConfig.bos_token);
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
    templateTokens: { ...(bosToken === undefined ? {} : { bos_token: bosToken }), ...(eosToken === undefined ? {} : { eos_token: eosToken }) },
    endTokenIds,
    topK: generation.top_k ?? 0,
    topP: generation.top_p ?? 1,
  };
}

/**
 * chat_template.jinja when the export has one (newer transformers save the template there, and
 * read it over tokenizer_config.json's field), else tokenizer_config.json's chat_template: one
 * string, or a named list whose 'default' serves plain chats and 'tool_use' (if any) chats with tools.
 */
async function chatTemplateOf(folder: string, tokenizerConfig: TokenizerConfigJson, engine: string): Promise<ChatTemplateSource | undefined> {
  if (existsSync(join(folder, 'chat_template.jinja'))) {
    return { text: await readText(folder, 'chat_template.jinja', engine), toolUseText: undefined, file: 'chat_template.jinja' };
  }
  const template = tokenizerConfig.chat_template;
  if (typeof template === 'string') return { text: template, toolUseText: undefined, file: 'tokenizer_config.json' };
  if (Array.isArray(template)) {
    const named = (name: string): string | undefined => template.find((entry) => entry.name === name)?.template;
    const text = named('default') ?? named('tool_use');
    if (text !== undefined) return { text, toolUseText: named('tool_use'), file: 'tokenizer_config.json' };
  }
  return undefined;
}

function tokenText(token: SpecialTokenJson | undefined): string | undefined {
  return typeof token === 'string' ? token : (token?.content ?? undefined);
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
