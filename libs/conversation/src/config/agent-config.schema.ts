import { z } from 'zod';
import { SECRET_NAME_PATTERN, SECRET_NAME_RULE } from '@switchboard/secrets/secret-name';
import { OPERATOR_KEY_ENV_NAMES, operatorKeyEndpointProblem, VAULT_MIGRATION_HINT } from './secret-reference';

/**
 * The stored agent configuration (one row per version in agent_config_versions). A call runs with
 * the version it started with. Secrets are never stored here: API keys and signing secrets are
 * *references*, by name, to the organization's vault (`POST /v1/secrets`), so reading an agent back
 * through the API never reveals a key, and replacing a key needs no new config version. The one
 * exception is the operator's own provider key (`apiKeyEnv: "OPENAI_API_KEY"`), which only ever goes
 * to that provider's own endpoint (see secret-reference.ts).
 */

/** Names a secret in the organization's vault. */
export const SecretNameSchema = z.string().regex(SECRET_NAME_PATTERN, SECRET_NAME_RULE);

/** Names the operator's provider key in the server's environment; only those listed, never an arbitrary variable. */
export const OperatorKeyEnvSchema = z.enum(OPERATOR_KEY_ENV_NAMES, {
  error: `must be ${OPERATOR_KEY_ENV_NAMES.join(' or ')} (the operator's provider key); ${VAULT_MIGRATION_HINT}`,
});

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** Settings shared by remote (OpenAI-compatible) engines. */
const remoteEndpoint = {
  /** OpenAI-compatible API root, e.g. https://api.openai.com/v1 or a self-hosted vLLM/Speaches URL. */
  baseUrl: httpUrl.optional(),
  /** The organization's own key for this endpoint: the name of a secret in its vault. */
  apiKeySecret: SecretNameSchema.optional(),
  /** The operator's key, from the server's environment: only for the provider's own endpoint (no baseUrl). */
  apiKeyEnv: OperatorKeyEnvSchema.optional(),
};

/**
 * One key source per endpoint, and the operator's key only where it belongs: an environment key
 * paired with a tenant-chosen URL would send the operator's credentials to the tenant.
 */
function checkKeySources(endpoint: { apiKeyEnv?: string; apiKeySecret?: string }, url: string | undefined, ctx: z.RefinementCtx): void {
  if (endpoint.apiKeyEnv !== undefined && endpoint.apiKeySecret !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['apiKeySecret'], message: 'give either apiKeySecret (your own key) or apiKeyEnv (the operator\'s), not both' });
  }
  if (endpoint.apiKeyEnv === undefined) return;
  const problem = operatorKeyEndpointProblem(url);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['apiKeyEnv'], message: problem });
}

export const SttConfigSchema = z.strictObject({
  /** 'openai': any OpenAI-compatible /audio/transcriptions server; 'local': Whisper ONNX from MODELS_DIR. */
  provider: z.enum(['openai', 'local']).default('openai'),
  model: z.string().min(1).default('whisper-1'),
  /** Vocabulary hint passed to the recogniser (names, products). */
  prompt: z.string().max(1000).optional(),
  ...remoteEndpoint,
}).superRefine((stt, ctx) => checkKeySources(stt, stt.baseUrl, ctx));

export const LlmConfigSchema = z.strictObject({
  /** 'openai': any OpenAI-compatible /chat/completions server; 'local': an ONNX model from MODELS_DIR. */
  provider: z.enum(['openai', 'local']).default('openai'),
  model: z.string().min(1).default('gpt-4o-mini'),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(4096).optional(),
  ...remoteEndpoint,
}).superRefine((llm, ctx) => checkKeySources(llm, llm.baseUrl, ctx));

export const TtsConfigSchema = z.strictObject({
  /** 'flite': built in, no model files; 'openai': OpenAI-compatible /audio/speech; 'kokoro'/'piper': local ONNX voices. */
  provider: z.enum(['flite', 'openai', 'kokoro', 'piper']).default('flite'),
  model: z.string().min(1).optional(),
  voice: z.string().min(1).optional(),
  ...remoteEndpoint,
}).superRefine((tts, ctx) => checkKeySources(tts, tts.baseUrl, ctx));

export const RealtimeConfigSchema = z.strictObject({
  provider: z.literal('openai').default('openai'),
  model: z.string().min(1).default('gpt-realtime'),
  voice: z.string().min(1).optional(),
  /** Who ends the caller's turn: the model's voice-activity detection or its semantic detector. */
  turnDetection: z.enum(['server_vad', 'semantic_vad']).default('server_vad'),
  /** wss:// (or ws:// on loopback) Realtime endpoint; OpenAI's by default. */
  url: z.url({ protocol: /^wss?$/, error: 'must be a ws(s) URL' }).optional(),
  /** The organization's own key for this endpoint: the name of a secret in its vault. */
  apiKeySecret: SecretNameSchema.optional(),
  /** The operator's key, from the server's environment: only for OpenAI's own Realtime endpoint (no url). */
  apiKeyEnv: OperatorKeyEnvSchema.optional(),
}).superRefine((realtime, ctx) => checkKeySources(realtime, realtime.url, ctx));

export const TurnConfigSchema = z.strictObject({
  /** VAD speech probability that starts speech (0..1). */
  threshold: z.number().gt(0).lt(1).default(0.5),
  /** Speech shorter than this is ignored (coughs, clicks). */
  minSpeechMs: z.number().int().min(0).max(5000).default(250),
  /** Silence after speech that ends the caller's turn. */
  minSilenceMs: z.number().int().min(100).max(5000).default(500),
  /** Audio kept before the detected speech start so the first syllable reaches the recogniser. */
  prefixPaddingMs: z.number().int().min(0).max(2000).default(300),
  /** Ask the end-of-turn model (Smart Turn) after a short pause; ends turns early when it is confident. */
  endOfTurnModel: z.boolean().default(false),
});

export const InterruptionsConfigSchema = z.strictObject({
  /** Whether caller speech stops the agent mid-sentence (barge-in). */
  enabled: z.boolean().default(true),
  /** Caller speech must last this long before the agent yields: shorter "uh-huh"s are backchannels. */
  minSpeechMs: z.number().int().min(0).max(5000).default(400),
});

export const IdleConfigSchema = z.strictObject({
  /** Silence (nobody speaking) before the agent prompts the caller. */
  promptAfterMs: z.number().int().min(1000).max(600_000).default(10_000),
  /** After this many unanswered prompts, the agent says goodbye and hangs up. */
  maxPrompts: z.number().int().min(0).max(10).default(2),
  prompt: z.string().min(1).default('Are you still there?'),
  goodbye: z.string().min(1).default("I haven't heard from you, so I'll hang up now. Goodbye."),
});

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or - (the LLM tool-name rule)');

export const EndCallToolSchema = z.strictObject({
  type: z.literal('end_call'),
  description: z.string().optional(),
  /** Said before hanging up when the model gives no closing words of its own. */
  goodbye: z.string().min(1).default('Thank you for calling. Goodbye.'),
});

export const TransferCallToolSchema = z.strictObject({
  type: z.literal('transfer_call'),
  description: z.string().optional(),
  /** The only numbers the model may transfer to (E.164); the model picks by number or label. */
  destinations: z
    .array(z.strictObject({ number: z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number'), label: z.string().min(1).optional() }))
    .min(1),
  /** Said before the transfer. */
  message: z.string().min(1).default('Please hold while I transfer your call.'),
});

export const WebhookToolSchema = z.strictObject({
  type: z.literal('webhook'),
  name: toolName,
  description: z.string().min(1),
  /** JSON Schema (an object schema) of the arguments; checked before the business is called. */
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
  /** The business's endpoint; receives a signed JSON POST. */
  url: httpUrl,
  /** The vault secret the request is signed with (Standard Webhooks: a `whsec_...` value). */
  signingSecret: SecretNameSchema,
  /** Removed: environment references; kept only to say so clearly to configs stored before. */
  signingSecretEnv: z.never({ error: `signingSecretEnv was removed: ${VAULT_MIGRATION_HINT}` }).optional(),
  timeoutMs: z.number().int().min(100).max(30_000).default(5000),
  /** Said when the tool has not answered within a second, so the caller is not left in silence. */
  fillerMessage: z.string().min(1).optional(),
});

export const ToolConfigSchema = z.discriminatedUnion('type', [EndCallToolSchema, TransferCallToolSchema, WebhookToolSchema]);

export const AgentConfigSchema = z.strictObject({
  /** May use {{caller.number}}, {{call.id}}, {{call.params.NAME}} (values from the inbound webhook / stream). */
  systemPrompt: z.string().max(50_000).default('You are a helpful phone agent. Keep answers short and conversational.'),
  /** Spoken when the call is answered; null waits for the caller to speak first. Variables as in systemPrompt. */
  firstMessage: z.string().max(2000).nullable().default(null),
  /** BCP 47 / ISO 639-1, passed to the recogniser. */
  language: z.string().min(2).max(16).default('en'),
  stt: SttConfigSchema.prefault({}),
  llm: LlmConfigSchema.prefault({}),
  tts: TtsConfigSchema.prefault({}),
  realtime: RealtimeConfigSchema.prefault({}),
  turn: TurnConfigSchema.prefault({}),
  interruptions: InterruptionsConfigSchema.prefault({}),
  idle: IdleConfigSchema.prefault({}),
  /** The call is ended (politely) after this long. */
  maxDurationS: z.number().int().min(1).max(4 * 3600).default(1800),
  tools: z.array(ToolConfigSchema).max(32).default([]),
  /** What the caller hears when the language model fails mid-answer. */
  apologyMessage: z.string().min(1).default("Sorry, I'm having trouble answering right now. Could you say that again?"),
  /** Said when the call reaches maxDurationS. */
  maxDurationMessage: z.string().min(1).default("We've reached the time limit for this call. Goodbye."),
});

export type AgentConfig = z.output<typeof AgentConfigSchema>;
export type AgentConfigInput = z.input<typeof AgentConfigSchema>;
export type ToolConfig = z.output<typeof ToolConfigSchema>;
export type WebhookToolConfig = z.output<typeof WebhookToolSchema>;
export type TransferCallToolConfig = z.output<typeof TransferCallToolSchema>;
export type EndCallToolConfig = z.output<typeof EndCallToolSchema>;
