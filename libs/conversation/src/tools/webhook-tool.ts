import { randomUUID } from 'node:crypto';
import type { ToolDefinition } from '@switchboard/inference/llm';
import type { WebhookToolConfig } from '../config/agent-config.schema';
import { resolveSecret } from '../config/secret-reference';
import { ArgumentValidator, parseToolArguments } from './tool-arguments';
import type { ToolCallContext, ToolInvocation, ToolOutcome } from './tool-contracts';
import { excerpt, failed, succeeded } from './tool-outcome';
import { signWebhook } from './webhook-signature';

export const WEBHOOK_TOOL_USER_AGENT = 'Switchboard-Tools/1';
/** A plain-text answer is passed to the model up to this length: the model only needs the gist. */
export const MAX_TEXT_RESULT_CHARS = 4096;
/** Answers larger than this are refused: nothing that big belongs in a phone conversation. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const ERROR_EXCERPT_CHARS = 200;

export interface WebhookToolOptions {
  /** Where signingSecretEnv is looked up; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Clock for the signature timestamp (ms since the epoch). */
  nowMs?: () => number;
  /** The webhook-id of each delivery. */
  newDeliveryId?: () => string;
}

/** Why a request to the business failed, as a sentence the model (and the call record) can use. */
class DeliveryError extends Error {}

/** The errno-style code inside a fetch failure (undici puts the socket error in `cause`). */
function networkFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'ENOTFOUND':
      return 'host not found (ENOTFOUND)';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `the connection was closed (${code})`;
    default:
      if (code !== undefined) return code;
      return typeof cause?.message === 'string' ? cause.message : (error as Error).message;
  }
}

/** Reads at most MAX_RESPONSE_BYTES of the body; a larger answer is refused rather than buffered. */
async function readBoundedText(response: Response): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > MAX_RESPONSE_BYTES) {
      await reader.cancel();
      throw new DeliveryError(`business endpoint answered more than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function resultFromText(text: string): unknown {
  if (text.trim().length === 0) return null;
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a content-type header is not trusted either way): the text itself is the result.
    return text.length > MAX_TEXT_RESULT_CHARS ? `${text.slice(0, MAX_TEXT_RESULT_CHARS)}...` : text;
  }
}

/**
 * A tool answered by the business's own endpoint: the model's arguments are checked against the
 * tool's JSON Schema, then POSTed, signed, to `url`. Every failure becomes an error outcome.
 */
export class WebhookTool {
  readonly definition: ToolDefinition;
  private readonly validator: ArgumentValidator;
  private readonly env: NodeJS.ProcessEnv;
  private readonly nowMs: () => number;
  private readonly newDeliveryId: () => string;

  /** Throws when `parameters` is not a valid JSON Schema (checked once, here, not per call). */
  constructor(
    private readonly config: WebhookToolConfig,
    options: WebhookToolOptions = {},
  ) {
    this.definition = { name: config.name, description: config.description, parameters: config.parameters };
    this.validator = ArgumentValidator.compile(config.name, config.parameters);
    this.env = options.env ?? process.env;
    this.nowMs = options.nowMs ?? Date.now;
    this.newDeliveryId = options.newDeliveryId ?? (() => `msg_${randomUUID()}`);
  }

  get name(): string {
    return this.config.name;
  }

  get fillerMessage(): string | undefined {
    return this.config.fillerMessage;
  }

  async run(invocation: ToolInvocation, context: ToolCallContext): Promise<ToolOutcome> {
    const parsed = parseToolArguments(invocation.arguments);
    if (!parsed.ok) return failed(parsed.error);
    const problems = this.validator.problems(parsed.value);
    if (problems !== undefined) return failed(problems);
    try {
      return succeeded(await this.deliver(parsed.value, context));
    } catch (error) {
      if (error instanceof DeliveryError) return failed(error.message);
      // resolveSecret's message names the variable only; anything else is unexpected but still reported.
      return failed((error as Error).message);
    }
  }

  private async deliver(args: Record<string, unknown>, context: ToolCallContext): Promise<unknown> {
    const secret = resolveSecret(this.config.signingSecretEnv, this.env);
    const body = JSON.stringify({
      tool: this.config.name,
      arguments: args,
      call: { id: context.callId, agentId: context.agentId, callerNumber: context.callerNumber },
    });
    const signature = signWebhook({ secret, id: this.newDeliveryId(), timestampS: Math.floor(this.nowMs() / 1000), body });
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    try {
      const response = await fetch(this.config.url, {
        method: 'POST',
        headers: { ...signature, 'content-type': 'application/json', 'user-agent': WEBHOOK_TOOL_USER_AGENT },
        body,
        // Following a redirect would re-send the signed body to wherever the redirect points.
        redirect: 'manual',
        signal: AbortSignal.any([timeout, context.signal]),
      });
      const text = await readBoundedText(response);
      if (response.status < 200 || response.status > 299) {
        const detail = excerpt(text, ERROR_EXCERPT_CHARS);
        throw new DeliveryError(`business endpoint answered HTTP ${response.status}${detail ? `: ${detail}` : ''}`);
      }
      return resultFromText(text);
    } catch (error) {
      if (error instanceof DeliveryError) throw error;
      if (timeout.aborted) throw new DeliveryError(`business endpoint timed out after ${this.config.timeoutMs} ms`);
      if (context.signal.aborted) throw new DeliveryError('cancelled before the business endpoint answered (the call ended or the caller interrupted)');
      throw new DeliveryError(`could not reach the business endpoint: ${networkFailure(error)}`);
    }
  }
}
