import { z } from 'zod';
import { parseModelDevices, parseModelPrecisions, type ParsedModelSettings } from './model-devices';
import { portSetting } from './server-port';
import { parseTrustProxy } from './trust-proxy';
import { parseKeyValueList, TRACES_SAMPLERS } from './tracing-config';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Empty strings in the environment mean "not set" (e.g. `DATABASE_URL=` in a .env file). */
const optionalString = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/** A `model=value,...` list (INFERENCE_MODEL_DEVICES, INFERENCE_MODEL_PRECISION): every bad entry is one issue naming it. */
const perModelSettings = <T extends string>(parse: (text: string) => ParsedModelSettings<T>) =>
  z
    .string()
    .default('')
    .transform((value, ctx) => {
      const parsed = parse(value);
      if ('settings' in parsed) return parsed.settings;
      for (const message of parsed.problems) ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    });

const httpUrl = z
  .string()
  .refine((value) => /^https?:\/\/[^/\s]+/i.test(value) && URL.canParse(value), {
    message: 'must be an absolute http(s) URL, e.g. https://voice.example.com',
  })
  .transform((value) => value.replace(/\/+$/, ''));

const postgresUrl = z.string().refine((value) => /^postgres(ql)?:\/\/.+/i.test(value) && URL.canParse(value), {
  message: 'must be a postgres:// or postgresql:// connection URL',
});

/** An OTLP/HTTP endpoint: kept as written (a trailing slash matters when /v1/traces is appended). */
const otlpUrl = z.string().refine((value) => /^https?:\/\/[^/\s]+/i.test(value) && URL.canParse(value), {
  message: 'must be an absolute http(s) URL, e.g. http://otel-collector:4318',
});

const otlpProtocol = z.enum(['http/protobuf', 'http/json'], {
  message: "must be 'http/protobuf' or 'http/json' (gRPC is not supported: use the collector's OTLP/HTTP port, usually 4318)",
});

/** OpenTelemetry's `key=value,key=value` lists; checked without echoing the value (headers carry API keys). */
const keyValueList = z.string().refine((value) => parseKeyValueList(value) !== undefined, {
  message: 'must be comma-separated key=value pairs (values URL-encoded)',
});

/**
 * Every setting the server reads from the environment. Validated once at start-up; a bad value
 * stops the process with one message that lists every problem (see loadAppConfig).
 */
export const environmentSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: portSetting,
    /** The base URL Twilio uses to reach us; signatures are computed over it, never over request headers. */
    PUBLIC_BASE_URL: optionalString(httpUrl),
    TWILIO_ACCOUNT_SID: optionalString(
      z.string().regex(/^AC[0-9a-f]{32}$/i, { message: 'must look like AC followed by 32 hex characters' }),
    ),
    TWILIO_AUTH_TOKEN: optionalString(z.string().min(16, { message: 'must be at least 16 characters' })),
    /** Twilio's REST API root (call control: hang-up, transfer, outbound calls); change only to test against a local fake. */
    TWILIO_API_BASE_URL: httpUrl.default('https://api.twilio.com'),
    /** Unset: an embedded Postgres (PGlite) is served on loopback from DATA_DIR. */
    DATABASE_URL: optionalString(postgresUrl),
    DATA_DIR: z.string().min(1).default('./data'),
    /** Apply pending migrations at start-up (turn off when a separate job migrates the database). */
    MIGRATE_ON_START: z
      .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
      .default('true')
      .transform((value) => value === 'true'),
    /**
     * How long an idle kept-alive HTTP connection stays open. Longer than any load balancer's idle
     * timeout for its connections to the instances (AWS ALB: 60 s), or the balancer may send a request
     * over a connection the server is closing at that moment, and the request is lost.
     */
    HTTP_KEEP_ALIVE_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(65),
    /** SIGTERM/SIGINT: live calls are ended and stores flushed, but the process exits after this long whatever still waits (a wedged database, a hung socket). */
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(25_000),
    /**
     * SIGTERM first drains: readiness answers 503, workers stop claiming work, and live calls may go on
     * for up to this long; at the bound each is ended with DRAIN_MESSAGE, never cut. 0: no drain.
     */
    DRAIN_TIMEOUT_S: z.coerce.number().int().min(0).max(86_400).default(1800),
    /**
     * A drain lasts at least this long (never longer than DRAIN_TIMEOUT_S), calls or none: what still
     * arrives is served until the load balancer's health checks, or Kubernetes' endpoint removal, have
     * stopped sending traffic here, instead of meeting a closed port.
     */
    DRAIN_MIN_S: z.coerce.number().int().min(0).max(600).default(5),
    /** What a caller still on the line when the drain bound passes hears before the call ends (Twilio's <Say>). */
    DRAIN_MESSAGE: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .default('We are sorry, we have to end this call now. Please call us again in a moment.'),
    /** Server processes: `auto` (one per core) or a number; each takes whole calls, any of them any socket. */
    WORKERS: z
      .union([z.literal('auto'), z.coerce.number().int().min(1).max(64)], { message: "must be 'auto' or a whole number from 1 to 64" })
      .default('auto'),
    /** Connections this process keeps to an external DATABASE_URL (the embedded database always uses one). */
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
    /** Bootstraps the first organization's admin key (stored hashed, never logged). */
    ADMIN_API_KEY: optionalString(z.string().min(24, { message: 'must be at least 24 characters' })),
    /** The deployment operator's key: creates and lists organizations (/v1/organizations). Unset: those routes answer 401. */
    OPERATOR_API_KEY: optionalString(z.string().min(32, { message: 'must be at least 32 characters' })),
    /** GET /metrics then requires `Authorization: Bearer <METRICS_TOKEN>`; unset, it answers loopback clients only (no proxy header). */
    METRICS_TOKEN: optionalString(z.string().min(16, { message: 'must be at least 16 characters' })),
    LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
    /** auto: human-readable lines when stdout is a terminal, JSON (one object a line) otherwise. */
    LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
    /** Where pulled models live (`npm run models -- pull <name>`). */
    MODELS_DIR: z.string().min(1).default('./models'),
    /**
     * Execution provider for local inference. auto: CUDA, else WebGPU, else CPU (one log line per
     * provider passed over); cuda or webgpu: that one or the server's inference refuses to start.
     */
    INFERENCE_DEVICE: z.enum(['auto', 'cuda', 'webgpu', 'cpu']).default('auto'),
    /** Per-model providers, `model=provider,...` (provider cpu, cuda or webgpu); unavailable: the INFERENCE_DEVICE one. */
    INFERENCE_MODEL_DEVICES: perModelSettings(parseModelDevices),
    /**
     * Per-model numeric variants, `model=precision,...` (fp32, fp16 or int8): the model's `_fp16` or
     * `_int8`/`_quantized` file where its provider runs it (fp16 on a GPU, int8 on CPU) and the file
     * was pulled; otherwise fp32 with a warning.
     */
    INFERENCE_MODEL_PRECISION: perModelSettings(parseModelPrecisions),
    /** Inference worker threads; unset: min(2, available cores). */
    INFERENCE_WORKERS: optionalString(z.coerce.number().int().min(1).max(64)),
    /** Longest a request waits for others to share its batch while every inference worker is busy (an idle worker runs it at once). */
    INFERENCE_BATCH_DELAY_MS: z.coerce.number().min(0).max(50).default(2),
    /**
     * Admission by inference capacity: a new call is refused (reason 'capacity') when, at the cost
     * per call measured on this instance, its live calls plus this one would keep the inference
     * workers busy more than this share of the time. 1 plans to the full device; values above 1 let
     * queues grow (only for a device whose runs overlap, e.g. a GPU shared by several workers).
     */
    INFERENCE_MAX_UTILISATION: z.coerce.number().gt(0).max(4).default(0.8),
    /** How long the single-use media-stream token minted by the voice webhook stays valid. */
    STREAM_TOKEN_TTL_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
    /**
     * How far ahead of the caller's playback the agent's speech is sent (ms of audio). The rest waits
     * in the server, so a barge-in's clear drops it there and an agent that talks faster than real
     * time cannot flood the caller's buffer. At least 150 ms: three of the pacer's 50 ms beats.
     */
    OUTBOUND_AUDIO_LEAD_MS: z.coerce.number().int().min(150).max(10_000).default(500),
    /** Live calls (inbound + outbound) one organization may have at once, unless the organization sets its own. */
    MAX_CONCURRENT_CALLS_PER_ORG: z.coerce.number().int().min(0).max(100_000).default(20),
    /**
     * The operator's ceiling on what an organization may set for itself (the operator key can set a
     * different cap per organization). No organization's limit is ever enforced above its cap.
     */
    MAX_CONCURRENT_CALLS_CAP: z.coerce.number().int().min(0).max(100_000).default(200),
    /**
     * Key that seals organizations' secrets (AES-256-GCM): 32 bytes, base64 or hex. Unset: a key is
     * generated once into DATA_DIR/secrets.key (mode 0600); back that file up with the database.
     */
    SECRETS_ENCRYPTION_KEY: optionalString(z.string().min(1)),
    /** Earlier keys (comma-separated), still able to open values until `npm run secrets -- rotate` re-seals them. */
    SECRETS_PREVIOUS_KEYS: optionalString(z.string().min(1)),
    /**
     * Hosts, IPs or CIDRs that tenant-directed requests (tools, webhooks, remote engines, realtime
     * sockets) may reach although they are loopback, private or link-local: a self-hosted vLLM on
     * the LAN, or 127.0.0.1 for local testing. Comma-separated. Everything else private is refused.
     */
    OUTBOUND_ALLOWED_HOSTS: z.string().default(''),
    /**
     * The proxies in front of the server (a hop count, or their addresses/CIDRs/presets), whose
     * X-Forwarded-For is believed for the client's address (rate limits, logs). Unset: nobody's.
     */
    TRUST_PROXY: optionalString(
      z.string().refine((value) => parseTrustProxy(value) !== undefined, {
        message: 'must be a hop count (1-10) or comma-separated proxy addresses, CIDR ranges or loopback/linklocal/uniquelocal ("true" is refused: any client could choose its address)',
      }),
    ),
    /** Redis for state shared by every process (the API rate limit); unset: Postgres holds it. */
    REDIS_URL: optionalString(z.string().regex(/^rediss?:\/\/.+/i, { message: 'must be a redis:// or rediss:// URL' })),
    /** Requests one client address may make per RATE_LIMIT_WINDOW_MS with a missing or unknown API key. */
    RATE_LIMIT_ANONYMOUS_REQUESTS: z.coerce.number().int().min(1).max(1_000_000).default(60),
    /** Replays (POST /v1/webhook-deliveries/:id/replay) one organization may ask for per hour. */
    WEBHOOK_REPLAYS_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(120),
    /** A live call whose media stream has been silent this long (and that Twilio has not ended) is reconciled. */
    CALL_RECONCILE_AFTER_MS: z.coerce.number().int().min(5_000).max(86_400_000).default(120_000),
    /** How often the reconciler looks for such calls (0 turns it off in this process). */
    CALL_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
    /** Requests one API key may make per RATE_LIMIT_WINDOW_MS before getting 429 with Retry-After. */
    RATE_LIMIT_REQUESTS: z.coerce.number().int().min(1).max(1_000_000).default(600),
    RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
    /**
     * Requests one organization may make per RATE_LIMIT_WINDOW_MS over all its keys (beside each
     * key's own RATE_LIMIT_REQUESTS): minting more keys does not buy more throughput. Unset: five
     * keys' worth (5 x RATE_LIMIT_REQUESTS).
     */
    RATE_LIMIT_ORGANIZATION_REQUESTS: z.coerce.number().int().min(1).max(100_000_000).optional(),
    /** Active (not revoked) API keys one organization may hold; minting one more answers 409. */
    MAX_API_KEYS_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(50),
    /** Outgoing webhooks: one attempt's time limit. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
    /** First retry delay; each later one doubles (with full jitter) up to WEBHOOK_RETRY_MAX_DELAY_MS. */
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
    WEBHOOK_RETRY_MAX_DELAY_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
    /** After this long without a successful attempt a delivery is marked failed (replayable). */
    WEBHOOK_GIVE_UP_AFTER_MS: z.coerce.number().int().min(1000).max(7 * 86_400_000).default(86_400_000),
    /** How often the delivery worker looks for due deliveries (it is also woken at once by new events). */
    WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
    /** Run the delivery worker in this process (turn off to run it elsewhere, or in tests that inspect the outbox). */
    WEBHOOK_WORKER_ENABLED: z
      .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
      .default('true')
      .transform((value) => value === 'true'),
    /** Where call recordings are kept on local disk (and spooled while a call runs); default DATA_DIR/recordings. */
    RECORDINGS_DIR: optionalString(z.string().min(1)),
    /** Set: finished recordings go to this bucket of an S3-compatible store instead of local disk. */
    RECORDINGS_S3_BUCKET: optionalString(z.string().min(3).max(63)),
    /** The store's endpoint (MinIO, R2, Ceph...); unset: AWS S3 in RECORDINGS_S3_REGION. */
    RECORDINGS_S3_ENDPOINT: optionalString(httpUrl),
    RECORDINGS_S3_REGION: z.string().min(1).default('us-east-1'),
    /** Unset: the AWS SDK's default credential chain (instance role, AWS_* variables). */
    RECORDINGS_S3_ACCESS_KEY_ID: optionalString(z.string().min(1)),
    RECORDINGS_S3_SECRET_ACCESS_KEY: optionalString(z.string().min(1)),
    /** Path-style URLs (endpoint/bucket/key), which most self-hosted stores need. */
    RECORDINGS_S3_FORCE_PATH_STYLE: z
      .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
      .default('false')
      .transform((value) => value === 'true'),
    /** Prepended to every object key, e.g. "switchboard/". */
    RECORDINGS_S3_PREFIX: z.string().max(200).default(''),
    /** How often recordings past their organization's retention period are deleted (0: not in this process). */
    RECORDINGS_RETENTION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(600_000),
    /** Run the post-call analysis worker in this process (turn off to run it elsewhere). */
    ANALYSIS_WORKER_ENABLED: z
      .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
      .default('true')
      .transform((value) => value === 'true'),
    /** How often the analysis worker looks for queued analyses. */
    ANALYSIS_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
    /** Run the outbound campaign dialer in this process (every process may: they never dial the same contact). */
    CAMPAIGN_DIALER_ENABLED: z
      .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
      .default('true')
      .transform((value) => value === 'true'),
    /** How often the campaign dialer looks for contacts to call. */
    CAMPAIGN_DIALER_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
    // OpenTelemetry traces (apps/server/src/tracing): names and meanings as the OpenTelemetry
    // specification defines them. Without an endpoint nothing is set up and tracing costs nothing.
    /** "true" (any case) turns tracing off whatever else is set; any other value is false, as the specification says. */
    OTEL_SDK_DISABLED: z.string().optional(),
    /** The collector's OTLP/HTTP base URL, e.g. http://otel-collector:4318; spans go to its /v1/traces. */
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalString(otlpUrl),
    /** The full URL spans are sent to, used as it is (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString(otlpUrl),
    OTEL_EXPORTER_OTLP_PROTOCOL: optionalString(otlpProtocol),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optionalString(otlpProtocol),
    /** key=value pairs, comma-separated, values URL-encoded (e.g. an API key header for a hosted backend). */
    OTEL_EXPORTER_OTLP_HEADERS: optionalString(keyValueList),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: optionalString(keyValueList),
    OTEL_SERVICE_NAME: optionalString(z.string().trim().min(1).max(255)),
    OTEL_RESOURCE_ATTRIBUTES: optionalString(keyValueList),
    OTEL_TRACES_SAMPLER: optionalString(z.enum(TRACES_SAMPLERS, { message: `must be one of ${TRACES_SAMPLERS.join(', ')}` })),
    /** The fraction of traces kept by the traceidratio samplers, 0 to 1. */
    OTEL_TRACES_SAMPLER_ARG: optionalString(z.coerce.number().min(0).max(1)),
    /** Optional seed: bind this E.164 number to a built-in "echo" agent at start-up. */
    ECHO_AGENT_NUMBER: optionalString(
      z.string().regex(/^\+[1-9]\d{6,14}$/, { message: 'must be an E.164 number such as +15551230000' }),
    ),
  })
  .superRefine((env, ctx) => {
    // In production, missing Twilio or admin settings would leave the server unusable or open:
    // refuse to start rather than run half-configured.
    if ((env.RECORDINGS_S3_ACCESS_KEY_ID === undefined) !== (env.RECORDINGS_S3_SECRET_ACCESS_KEY === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['RECORDINGS_S3_SECRET_ACCESS_KEY'], message: 'set both RECORDINGS_S3_ACCESS_KEY_ID and RECORDINGS_S3_SECRET_ACCESS_KEY, or neither' });
    }
    if (env.MAX_CONCURRENT_CALLS_PER_ORG > env.MAX_CONCURRENT_CALLS_CAP) {
      ctx.addIssue({ code: 'custom', path: ['MAX_CONCURRENT_CALLS_PER_ORG'], message: 'must not exceed MAX_CONCURRENT_CALLS_CAP' });
    }
    if (env.NODE_ENV !== 'production') return;
    // Several processes (or hosts) share one Postgres: a key file generated on one would leave the
    // others unable to open the secrets.
    if (env.DATABASE_URL !== undefined && env.SECRETS_ENCRYPTION_KEY === undefined) {
      ctx.addIssue({ code: 'custom', path: ['SECRETS_ENCRYPTION_KEY'], message: 'is required when NODE_ENV=production and DATABASE_URL is set' });
    }
    for (const key of ['PUBLIC_BASE_URL', 'TWILIO_AUTH_TOKEN', 'ADMIN_API_KEY'] as const) {
      if (env[key] === undefined) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'is required when NODE_ENV=production' });
      }
    }
  });

export type Environment = z.infer<typeof environmentSchema>;
