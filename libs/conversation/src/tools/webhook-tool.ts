import { randomUUID } from 'node:crypto';
import type { ToolDefinition } from '@switchboard/inference';
import { outboundRefusalOf } from '@switchboard/net';
import type { WebhookToolConfig } from '@switchboard/agent-config';
import { parseToolArguments, type ArgumentValidator } from './tool-arguments';
import type { ToolCallContext, ToolInvocation, ToolOutcome } from './tool-contracts';
import { excerpt, failed, succeeded } from './tool-outcome';
import { compileToolArguments } from './tool-schema';
import { signWebhook } from '@switchboard/secrets';

export const WEBHOOK_TOOL_USER_AGENT = 'Switchboard-Tools/1';
/** A plain-text answer is passed to the model up to this length: the model only needs the gist. */
export const MAX_TEXT_RESULT_CHARS = 4096;
/** Answers larger than this are refused: nothing that big belongs in a phone conversation. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const ERROR_EXCERPT_CHARS = 200;

/**
 * How a tool request leaves the process. The server passes its outbound guard's fetch (private
 * addresses refused at connect time, redirects never followed); `timeoutMs` bounds the exchange.
 */
export type ToolFetch = (url: string, init: RequestInit & { timeoutMs: number }) => Promise<Response>;

/** The global fetch, with redirects refused: a redirect would re-send the signed body to wherever it points. */
const defaultToolFetch: ToolFetch = (url, { timeoutMs: _timeoutMs, ...init }) => fetch(url, { ...init, redirect: 'manual' });

export interface WebhookToolOptions {
  /**
   * The value of the organization's vault secret `name` (the tool's signingSecret), or undefined
   * when it has none by that name. Asked at each request, so a replaced secret applies at once.
   */
  resolveSigningSecret?: (name: string) => Promise<string | undefined>;
  fetch?: ToolFetch;
  /** Clock for the signature timestamp (ms since the epoch). */
  nowMs?: () => number;
  /** The webhook-id of each delivery. */
  newDeliveryId?: () => string;
  /** `parameters` already compiled (by a ToolSchemaCache); compiled here when absent. */
  validator?: ArgumentValidator;
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
  private readonly resolveSigningSecret: (name: string) => Promise<string | undefined>;
  private readonly fetch: ToolFetch;
  private readonly nowMs: () => number;
  private readonly newDeliveryId: () => string;

  /** Throws when `parameters` is not a valid JSON Schema (checked once, here, not per call). */
  constructor(
    private readonly config: WebhookToolConfig,
    options: WebhookToolOptions = {},
  ) {
    this.definition = { name: config.name, description: config.description, parameters: config.parameters };
    this.validator = options.validator ?? compileToolArguments(config.name, config.parameters);
    this.resolveSigningSecret = options.resolveSigningSecret ?? (async () => undefined);
    this.fetch = options.fetch ?? defaultToolFetch;
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
      // Anything else is unexpected (a vault error names the secret, never its value) but still reported.
      return failed((error as Error).message);
    }
  }

  private async deliver(args: Record<string, unknown>, context: ToolCallContext): Promise<unknown> {
    const secret = await this.resolveSigningSecret(this.config.signingSecret);
    if (secret === undefined) throw new DeliveryError(`the signing secret "${this.config.signingSecret}" does not exist in this organization`);
    const body = JSON.stringify({
      tool: this.config.name,
      arguments: args,
      call: { id: context.callId, agentId: context.agentId, callerNumber: context.callerNumber },
    });
    const signature = signWebhook({ secret, id: this.newDeliveryId(), timestampS: Math.floor(this.nowMs() / 1000), body });
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    try {
      const response = await this.fetch(this.config.url, {
        method: 'POST',
        headers: { ...signature, 'content-type': 'application/json', 'user-agent': WEBHOOK_TOOL_USER_AGENT },
        body,
        signal: AbortSignal.any([timeout, context.signal]),
        timeoutMs: this.config.timeoutMs,
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
      // The server's outbound guard refused the address (a private one, a refused URL), wherever fetch wrapped it.
      const refused = outboundRefusalOf(error);
      if (refused) throw new DeliveryError(`the business endpoint was not called: ${refused.message}`);
      throw new DeliveryError(`could not reach the business endpoint: ${networkFailure(error)}`);
    }
  }
}
