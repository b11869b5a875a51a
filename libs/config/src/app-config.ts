import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { environmentSchema, type Environment } from './environment.schema';
import { parseTrustProxy } from './trust-proxy';
import { tracingConfigOf, type TracingConfig } from './tracing-config';

/** The validated, typed configuration every module reads (never `process.env` directly). */
/** RATE_LIMIT_ORGANIZATION_REQUESTS when unset: this many keys' budgets. */
export const ORGANIZATION_REQUESTS_PER_KEY_BUDGET = 5;

export interface AppConfig {
  nodeEnv: Environment['NODE_ENV'];
  port: number;
  /** After SIGTERM/SIGINT the process exits within this long, whatever still waits. */
  shutdownTimeoutMs: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT_S: idle kept-alive connections are closed after this long. */
  httpKeepAliveTimeoutMs: number;
  /**
   * SIGTERM's drain (apps/server/src/lifecycle): how long live calls may go on, the least it lasts
   * (so load balancers notice it before the port closes), and what ends the calls at the bound.
   */
  drain: { timeoutMs: number; minMs: number; message: string };
  /** Without trailing slash. Defaults to http://localhost:PORT for local development. */
  publicBaseUrl: string;
  twilio: {
    accountSid: string | undefined;
    /** Undefined: every Twilio request is refused (signatures cannot be checked). */
    authToken: string | undefined;
    /** REST API root, without trailing slash. */
    apiBaseUrl: string;
  };
  database: {
    /** Undefined: embedded PGlite under `dataDir`. */
    url: string | undefined;
    dataDir: string;
    migrateOnStart: boolean;
    /** Pool size for an external database. */
    poolMax: number;
    /**
     * Set only inside a cluster worker (never from the environment an operator writes): the
     * embedded database the primary serves and has migrated. See apps/server/src/cluster.
     */
    sharedEmbeddedUrl?: string;
  };
  /** Server processes (node:cluster workers), each carrying whole calls; 1 runs without a primary. */
  workers: number;
  adminApiKey: string | undefined;
  /** Undefined: nobody can create organizations through the API. */
  operatorApiKey: string | undefined;
  /** Undefined: GET /metrics answers loopback clients only. */
  metricsToken: string | undefined;
  logLevel: Environment['LOG_LEVEL'];
  logFormat: Environment['LOG_FORMAT'];
  inference: {
    modelsDir: string;
    device: Environment['INFERENCE_DEVICE'];
    /** INFERENCE_MODEL_DEVICES: model name -> provider. */
    modelDevices: Environment['INFERENCE_MODEL_DEVICES'];
    /** INFERENCE_MODEL_PRECISION: model name -> fp32, fp16 or int8. */
    modelPrecisions: Environment['INFERENCE_MODEL_PRECISION'];
    workers: number | undefined;
    batchMaxDelayMs: number;
    /** INFERENCE_MAX_UTILISATION: the share of the inference workers' time admission plans to fill. */
    maxUtilisation: number;
  };
  streamTokenTtlMs: number;
  echoAgentNumber: string | undefined;
  calls: {
    /** Deployment default for organizations without their own limit. */
    maxConcurrentPerOrg: number;
    /** The operator's ceiling on an organization's own limit (unless the operator sets another for it). */
    maxConcurrentCap: number;
    /** A live call whose media has been silent this long is reconciled. */
    reconcileAfterMs: number;
    /** 0: no reconciler in this process. */
    reconcileIntervalMs: number;
    /** OUTBOUND_AUDIO_LEAD_MS: the agent's speech is sent at most this far ahead of the caller's playback. */
    outboundAudioLeadMs: number;
  };
  secrets: {
    /** The active key (base64 or hex of 32 bytes); undefined: the key file in DATA_DIR. */
    encryptionKey: string | undefined;
    /** Keys that may still open values sealed before a rotation. */
    previousKeys: string[];
  };
  outbound: {
    /** Host names, IPs and CIDRs exempt from the private-address rule. */
    allowedHosts: string[];
  };
  recordings: {
    /** Local recordings and the spool of recordings in progress. */
    dir: string;
    /** Undefined: recordings stay on local disk. */
    s3: { bucket: string; endpoint: string | undefined; region: string; accessKeyId: string | undefined; secretAccessKey: string | undefined; forcePathStyle: boolean; prefix: string } | undefined;
    /** 0: no retention sweep in this process. */
    retentionSweepIntervalMs: number;
  };
  analysis: {
    workerEnabled: boolean;
    pollIntervalMs: number;
  };
  campaigns: {
    dialerEnabled: boolean;
    dialerIntervalMs: number;
  };
  redisUrl: string | undefined;
  /** Express's `trust proxy` (TRUST_PROXY): whose X-Forwarded-For gives the client's address; undefined: nobody's. */
  trustProxy: number | string[] | undefined;
  rateLimit: {
    /** Requests per key per window. */
    requests: number;
    /** Requests per client address per window with a missing or unknown key. */
    anonymousRequests: number;
    /** Requests per organization per window, summed over its keys. */
    organizationRequests: number;
    windowMs: number;
  };
  /** Active API keys one organization may hold. */
  maxApiKeysPerOrganization: number;
  webhooks: {
    timeoutMs: number;
    retryBaseMs: number;
    retryMaxDelayMs: number;
    giveUpAfterMs: number;
    pollIntervalMs: number;
    workerEnabled: boolean;
    /** Replays one organization may request per hour. */
    replaysPerHour: number;
  };
  /** OpenTelemetry traces over OTLP/HTTP (OTEL_* variables); undefined: no tracing at all. */
  tracing: TracingConfig | undefined;
}

export class ConfigValidationError extends Error {
  readonly retryable = false;
  constructor(readonly problems: string[]) {
    super(`Invalid environment configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/**
 * The URL the server signs Twilio requests against when PUBLIC_BASE_URL is unset. The simulated
 * caller (`npm run call`) signs for the same one, so the two cannot drift apart.
 */
export function defaultPublicBaseUrl(port: number | string): string {
  return `http://localhost:${port}`;
}

/**
 * Validates the whole environment at once so an operator sees every bad variable in one message.
 * Values are never echoed back: some of them are secrets.
 */
export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ConfigValidationError(problems);
  }
  const e = parsed.data;
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_S * 1000,
    drain: { timeoutMs: e.DRAIN_TIMEOUT_S * 1000, minMs: Math.min(e.DRAIN_MIN_S, e.DRAIN_TIMEOUT_S) * 1000, message: e.DRAIN_MESSAGE },
    workers: e.WORKERS === 'auto' ? availableParallelism() : e.WORKERS,
    publicBaseUrl: e.PUBLIC_BASE_URL ?? defaultPublicBaseUrl(e.PORT),
    twilio: { accountSid: e.TWILIO_ACCOUNT_SID, authToken: e.TWILIO_AUTH_TOKEN, apiBaseUrl: e.TWILIO_API_BASE_URL },
    database: { url: e.DATABASE_URL, dataDir: e.DATA_DIR, migrateOnStart: e.MIGRATE_ON_START, poolMax: e.DATABASE_POOL_MAX },
    adminApiKey: e.ADMIN_API_KEY,
    operatorApiKey: e.OPERATOR_API_KEY,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    inference: {
      modelsDir: e.MODELS_DIR,
      device: e.INFERENCE_DEVICE,
      modelDevices: e.INFERENCE_MODEL_DEVICES,
      modelPrecisions: e.INFERENCE_MODEL_PRECISION,
      workers: e.INFERENCE_WORKERS,
      batchMaxDelayMs: e.INFERENCE_BATCH_DELAY_MS,
      maxUtilisation: e.INFERENCE_MAX_UTILISATION,
    },
    streamTokenTtlMs: e.STREAM_TOKEN_TTL_MS,
    echoAgentNumber: e.ECHO_AGENT_NUMBER,
    calls: {
      maxConcurrentPerOrg: e.MAX_CONCURRENT_CALLS_PER_ORG,
      maxConcurrentCap: e.MAX_CONCURRENT_CALLS_CAP,
      reconcileAfterMs: e.CALL_RECONCILE_AFTER_MS,
      reconcileIntervalMs: e.CALL_RECONCILE_INTERVAL_MS,
      outboundAudioLeadMs: e.OUTBOUND_AUDIO_LEAD_MS,
    },
    secrets: { encryptionKey: e.SECRETS_ENCRYPTION_KEY, previousKeys: commaList(e.SECRETS_PREVIOUS_KEYS ?? '') },
    outbound: { allowedHosts: commaList(e.OUTBOUND_ALLOWED_HOSTS) },
    recordings: {
      dir: e.RECORDINGS_DIR ?? join(e.DATA_DIR, 'recordings'),
      s3:
        e.RECORDINGS_S3_BUCKET === undefined
          ? undefined
          : {
              bucket: e.RECORDINGS_S3_BUCKET,
              endpoint: e.RECORDINGS_S3_ENDPOINT,
              region: e.RECORDINGS_S3_REGION,
              accessKeyId: e.RECORDINGS_S3_ACCESS_KEY_ID,
              secretAccessKey: e.RECORDINGS_S3_SECRET_ACCESS_KEY,
              forcePathStyle: e.RECORDINGS_S3_FORCE_PATH_STYLE,
              prefix: e.RECORDINGS_S3_PREFIX,
            },
      retentionSweepIntervalMs: e.RECORDINGS_RETENTION_SWEEP_INTERVAL_MS,
    },
    analysis: { workerEnabled: e.ANALYSIS_WORKER_ENABLED, pollIntervalMs: e.ANALYSIS_POLL_INTERVAL_MS },
    campaigns: { dialerEnabled: e.CAMPAIGN_DIALER_ENABLED, dialerIntervalMs: e.CAMPAIGN_DIALER_INTERVAL_MS },
    redisUrl: e.REDIS_URL,
    trustProxy: e.TRUST_PROXY === undefined ? undefined : parseTrustProxy(e.TRUST_PROXY),
    rateLimit: {
      requests: e.RATE_LIMIT_REQUESTS,
      anonymousRequests: e.RATE_LIMIT_ANONYMOUS_REQUESTS,
      organizationRequests: e.RATE_LIMIT_ORGANIZATION_REQUESTS ?? ORGANIZATION_REQUESTS_PER_KEY_BUDGET * e.RATE_LIMIT_REQUESTS,
      windowMs: e.RATE_LIMIT_WINDOW_MS,
    },
    maxApiKeysPerOrganization: e.MAX_API_KEYS_PER_ORG,
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      retryMaxDelayMs: e.WEBHOOK_RETRY_MAX_DELAY_MS,
      giveUpAfterMs: e.WEBHOOK_GIVE_UP_AFTER_MS,
      pollIntervalMs: e.WEBHOOK_POLL_INTERVAL_MS,
      workerEnabled: e.WEBHOOK_WORKER_ENABLED,
      replaysPerHour: e.WEBHOOK_REPLAYS_PER_HOUR,
    },
    tracing: tracingConfigOf(e),
  };
}

function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

