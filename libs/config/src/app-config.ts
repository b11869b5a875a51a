import { environmentSchema, type Environment } from './environment.schema';

/** The validated, typed configuration every module reads (never `process.env` directly). */
export interface AppConfig {
  nodeEnv: Environment['NODE_ENV'];
  port: number;
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
  };
  adminApiKey: string | undefined;
  /** Undefined: nobody can create organizations through the API. */
  operatorApiKey: string | undefined;
  logLevel: Environment['LOG_LEVEL'];
  inference: {
    modelsDir: string;
    device: Environment['INFERENCE_DEVICE'];
    workers: number | undefined;
    batchMaxDelayMs: number;
  };
  streamTokenTtlMs: number;
  echoAgentNumber: string | undefined;
  calls: {
    /** Deployment default for organizations without their own limit. */
    maxConcurrentPerOrg: number;
  };
  rateLimit: {
    /** Requests per key per window. */
    requests: number;
    windowMs: number;
  };
  webhooks: {
    timeoutMs: number;
    retryBaseMs: number;
    retryMaxDelayMs: number;
    giveUpAfterMs: number;
    pollIntervalMs: number;
    workerEnabled: boolean;
  };
}

export class ConfigValidationError extends Error {
  readonly retryable = false;
  constructor(readonly problems: string[]) {
    super(`Invalid environment configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
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
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`,
    twilio: { accountSid: e.TWILIO_ACCOUNT_SID, authToken: e.TWILIO_AUTH_TOKEN, apiBaseUrl: e.TWILIO_API_BASE_URL },
    database: { url: e.DATABASE_URL, dataDir: e.DATA_DIR, migrateOnStart: e.MIGRATE_ON_START },
    adminApiKey: e.ADMIN_API_KEY,
    operatorApiKey: e.OPERATOR_API_KEY,
    logLevel: e.LOG_LEVEL,
    inference: {
      modelsDir: e.MODELS_DIR,
      device: e.INFERENCE_DEVICE,
      workers: e.INFERENCE_WORKERS,
      batchMaxDelayMs: e.INFERENCE_BATCH_DELAY_MS,
    },
    streamTokenTtlMs: e.STREAM_TOKEN_TTL_MS,
    echoAgentNumber: e.ECHO_AGENT_NUMBER,
    calls: { maxConcurrentPerOrg: e.MAX_CONCURRENT_CALLS_PER_ORG },
    rateLimit: { requests: e.RATE_LIMIT_REQUESTS, windowMs: e.RATE_LIMIT_WINDOW_MS },
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      retryMaxDelayMs: e.WEBHOOK_RETRY_MAX_DELAY_MS,
      giveUpAfterMs: e.WEBHOOK_GIVE_UP_AFTER_MS,
      pollIntervalMs: e.WEBHOOK_POLL_INTERVAL_MS,
      workerEnabled: e.WEBHOOK_WORKER_ENABLED,
    },
  };
}
