import { z } from 'zod';
import { SECRET_NAME_PATTERN, SECRET_NAME_RULE } from '@switchboard/secrets';
import { OPERATOR_KEY_ENV_NAMES, operatorKeyEndpointProblem, VAULT_MIGRATION_HINT } from './secret-reference';
import { TransferDestinationSchema, VoicemailConfigSchema } from './call-handoff.schema';

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
  baseUrl: httpUrl.optional().describe('OpenAI-compatible API root, e.g. https://api.openai.com/v1 or a self-hosted vLLM/Speaches URL.'),
  apiKeySecret: SecretNameSchema.optional().describe("The organization's own key for this endpoint: the name of a secret in its vault."),
  apiKeyEnv: OperatorKeyEnvSchema.optional().describe("The operator's key, from the server's environment: only for the provider's own endpoint (no baseUrl)."),
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
  provider: z.enum(['openai', 'local']).default('openai').describe("'openai': any OpenAI-compatible /audio/transcriptions server; 'local': Whisper ONNX from MODELS_DIR."),
  model: z.string().min(1).default('whisper-1'),
  prompt: z.string().max(1000).optional().describe('Vocabulary hint passed to the recogniser (names, products).'),
  ...remoteEndpoint,
}).superRefine((stt, ctx) => checkKeySources(stt, stt.baseUrl, ctx));

export const LlmConfigSchema = z.strictObject({
  provider: z.enum(['openai', 'local']).default('openai').describe("'openai': any OpenAI-compatible /chat/completions server; 'local': an ONNX model from MODELS_DIR."),
  model: z.string().min(1).default('gpt-4o-mini'),
  temperature: z.number().min(0).max(2).optional().describe('Sampling temperature, 0 to 2 (the provider\'s default when not set).'),
  maxTokens: z.number().int().min(1).max(4096).optional().describe('Longest reply, in tokens (1 to 4096).'),
  ...remoteEndpoint,
}).superRefine((llm, ctx) => checkKeySources(llm, llm.baseUrl, ctx));

export const TtsConfigSchema = z.strictObject({
  provider: z.enum(['flite', 'openai', 'kokoro', 'piper']).default('flite').describe("'flite': built in, no model files; 'openai': OpenAI-compatible /audio/speech; 'kokoro'/'piper': local ONNX voices."),
  model: z.string().min(1).optional(),
  voice: z.string().min(1).optional(),
  ...remoteEndpoint,
}).superRefine((tts, ctx) => checkKeySources(tts, tts.baseUrl, ctx));

export const RealtimeConfigSchema = z.strictObject({
  provider: z.literal('openai').default('openai'),
  model: z.string().min(1).default('gpt-realtime'),
  voice: z.string().min(1).optional(),
  turnDetection: z.enum(['server_vad', 'semantic_vad']).default('server_vad').describe("Who ends the caller's turn: the model's voice-activity detection or its semantic detector."),
  url: z.url({ protocol: /^wss?$/, error: 'must be a ws(s) URL' }).optional().describe("wss:// (or ws:// on loopback) Realtime endpoint; OpenAI's by default."),
  apiKeySecret: SecretNameSchema.optional().describe("The organization's own key for this endpoint: the name of a secret in its vault."),
  apiKeyEnv: OperatorKeyEnvSchema.optional().describe("The operator's key, from the server's environment: only for OpenAI's own Realtime endpoint (no url)."),
}).superRefine((realtime, ctx) => checkKeySources(realtime, realtime.url, ctx));

export const TurnConfigSchema = z.strictObject({
  threshold: z.number().gt(0).lt(1).default(0.5).describe('VAD speech probability that starts speech (between 0 and 1).'),
  minSpeechMs: z.number().int().min(0).max(5000).default(250).describe('Speech shorter than this is ignored (coughs, clicks).'),
  minSilenceMs: z.number().int().min(100).max(5000).default(500).describe("Silence after speech that ends the caller's turn."),
  prefixPaddingMs: z.number().int().min(0).max(2000).default(300).describe('Audio kept before the detected speech start so the first syllable reaches the recogniser.'),
  endOfTurnModel: z.boolean().default(false).describe('Ask the end-of-turn model (Smart Turn) after a short pause; ends turns early when it is confident.'),
});

export const InterruptionsConfigSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('Whether caller speech stops the agent mid-sentence (barge-in).'),
  minSpeechMs: z.number().int().min(0).max(5000).default(400).describe('Caller speech must last this long before the agent yields: shorter "uh-huh"s are backchannels.'),
});

export const IdleConfigSchema = z.strictObject({
  promptAfterMs: z.number().int().min(1000).max(600_000).default(10_000).describe('Silence (nobody speaking) before the agent prompts the caller.'),
  maxPrompts: z.number().int().min(0).max(10).default(2).describe('After this many unanswered prompts, the agent says goodbye and hangs up.'),
  prompt: z.string().min(1).default('Are you still there?'),
  goodbye: z.string().min(1).default("I haven't heard from you, so I'll hang up now. Goodbye."),
});

export const RecordingConfigSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Record the call (GET /v1/calls/{id}/recording): what the caller said and what they heard of the agent.'),
  channels: z
    .enum(['dual', 'mono'])
    .default('dual')
    .describe("'dual': a stereo WAV with the caller on the left and the agent on the right; 'mono': both mixed into one channel."),
});

/**
 * Post-call analysis: after the call ends, a durable job asks an LLM for a summary, data extracted
 * into the tenant's JSON Schema and a success verdict (docs/recordings-and-analysis.md).
 */
export const AnalysisConfigSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Analyse each call after it ends (shown on the call, sent as call.analyzed, charged as analysis lines).'),
  summaryPrompt: z
    .string()
    .min(1)
    .max(4000)
    .default('Summarise the call in two or three sentences: why the caller called, what was done, and what is left to do.')
    .describe('How to summarise the call.'),
  structuredData: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('JSON Schema (an object schema) of the data to extract from the call, checked when saved; the answer is validated against it (one retry with the errors).'),
  successCriteria: z.string().min(1).max(4000).optional().describe('What a successful call achieves; the analysis says whether this one did, and why.'),
  llm: LlmConfigSchema.optional().describe("The model that analyses; the agent's own `llm` when not set."),
});

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or - (the LLM tool-name rule)');

export const EndCallToolSchema = z.strictObject({
  type: z.literal('end_call'),
  description: z.string().optional(),
  goodbye: z.string().min(1).default('Thank you for calling. Goodbye.').describe('Said before hanging up when the model gives no closing words of its own.'),
});

export const TransferCallToolSchema = z.strictObject({
  type: z.literal('transfer_call'),
  description: z.string().optional(),
  destinations: z
    .array(TransferDestinationSchema)
    .min(1)
    .describe('The only numbers the model may transfer to (E.164); the model picks by number or label. Each is a cold transfer unless mode is "warm".'),
  message: z.string().min(1).default('Please hold while I transfer your call.').describe('Said before a cold transfer (a warm one says its holdMessage).'),
});

export const WebhookToolSchema = z.strictObject({
  type: z.literal('webhook'),
  name: toolName,
  description: z.string().min(1),
  parameters: z
    .record(z.string(), z.unknown())
    .default({ type: 'object', properties: {} })
    .describe('JSON Schema (an object schema) of the arguments; checked before the business is called.'),
  url: httpUrl.describe("The business's endpoint; receives a signed JSON POST."),
  signingSecret: SecretNameSchema.describe('The vault secret the request is signed with (Standard Webhooks: a `whsec_...` value).'),
  /** Removed: environment references; kept only to say so clearly to configs stored before. */
  signingSecretEnv: z.never({ error: `signingSecretEnv was removed: ${VAULT_MIGRATION_HINT}` }).optional(),
  timeoutMs: z.number().int().min(100).max(30_000).default(5000),
  fillerMessage: z.string().min(1).optional().describe('Said when the tool has not answered within a second, so the caller is not left in silence.'),
});

export const ToolConfigSchema = z.discriminatedUnion('type', [EndCallToolSchema, TransferCallToolSchema, WebhookToolSchema]);

/**
 * Which engines read a field, as `x-engines` in the config's JSON Schema (GET /v1/agents/config-schema):
 * the console's form shows a field only for the engines that use it. The echo engine reads only `recording`.
 */
const usedBy = (...engines: Array<'pipeline' | 'realtime' | 'echo'>) => ({ 'x-engines': engines });
const conversational = usedBy('pipeline', 'realtime');

export const AgentConfigSchema = z.strictObject({
  systemPrompt: z
    .string()
    .max(50_000)
    .default('You are a helpful phone agent. Keep answers short and conversational.')
    .meta({ description: 'May use {{caller.number}}, {{call.id}}, {{call.params.NAME}} (values from the inbound webhook / stream).', ...conversational }),
  firstMessage: z
    .string()
    .max(2000)
    .nullable()
    .default(null)
    .meta({ description: 'Spoken when the call is answered; empty (null) waits for the caller to speak first. Variables as in systemPrompt.', ...conversational }),
  language: z.string().min(2).max(16).default('en').meta({ description: 'BCP 47 / ISO 639-1, passed to the recogniser.', ...usedBy('pipeline') }),
  stt: SttConfigSchema.prefault({}).meta({ description: 'Speech recognition.', ...usedBy('pipeline') }),
  llm: LlmConfigSchema.prefault({}).meta({ description: 'The language model.', ...usedBy('pipeline') }),
  tts: TtsConfigSchema.prefault({}).meta({ description: 'The voice.', ...usedBy('pipeline') }),
  realtime: RealtimeConfigSchema.prefault({}).meta({ description: 'The speech-to-speech model.', ...usedBy('realtime') }),
  turn: TurnConfigSchema.prefault({}).meta({ description: "Voice activity detection: when the caller's turn starts and ends.", ...conversational }),
  interruptions: InterruptionsConfigSchema.prefault({}).meta({ description: 'Barge-in: caller speech over the agent.', ...conversational }),
  idle: IdleConfigSchema.prefault({}).meta({ description: 'What the agent does when nobody speaks.', ...conversational }),
  maxDurationS: z
    .number()
    .int()
    .min(1)
    .max(4 * 3600)
    .default(1800)
    .meta({ description: 'The call is ended (politely) after this many seconds.', ...conversational }),
  maxReplyMs: z
    .number()
    .int()
    .min(1000)
    .max(600_000)
    .default(60_000)
    .meta({
      description:
        "The longest one reply may speak (ms of audio). A model that does not stop is cut there: the caller hears exactly this much, generation stops, and the call's events get reply_limit_reached.",
      ...conversational,
    }),
  tools: z.array(ToolConfigSchema).max(32).default([]).meta({ description: 'Functions the model may call: end_call, transfer_call, webhook.', ...conversational }),
  analysis: AnalysisConfigSchema.prefault({}).meta({ description: 'Post-call analysis: a summary, structured data and a success verdict.', ...usedBy('pipeline', 'realtime', 'echo') }),
  voicemail: VoicemailConfigSchema.nullable()
    .default(null)
    .meta({ description: 'Voicemail drop on outbound calls placed with machineDetection DetectMessageEnd (POST /v1/calls may override it); null: none.', ...conversational }),
  recording: RecordingConfigSchema.prefault({}).meta({ description: 'Call recording.', ...usedBy('pipeline', 'realtime', 'echo') }),
  apologyMessage: z
    .string()
    .min(1)
    .default("Sorry, I'm having trouble answering right now. Could you say that again?")
    .meta({ description: 'What the caller hears when the language model fails mid-answer.', ...conversational }),
  maxDurationMessage: z
    .string()
    .min(1)
    .default("We've reached the time limit for this call. Goodbye.")
    .meta({ description: 'Said when the call reaches maxDurationS.', ...conversational }),
});

export type AgentConfig = z.output<typeof AgentConfigSchema>;
export type AgentConfigInput = z.input<typeof AgentConfigSchema>;
export type ToolConfig = z.output<typeof ToolConfigSchema>;
export type RecordingConfig = z.output<typeof RecordingConfigSchema>;
export type AnalysisConfig = z.output<typeof AnalysisConfigSchema>;
export type WebhookToolConfig = z.output<typeof WebhookToolSchema>;
export type TransferCallToolConfig = z.output<typeof TransferCallToolSchema>;
export type EndCallToolConfig = z.output<typeof EndCallToolSchema>;
