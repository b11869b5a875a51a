import type { LookupFunction } from 'node:net';
import WebSocket, { type RawData } from 'ws';
import { EngineError } from '../../contracts/engine-error';
import { OPENAI_REALTIME_ENGINE } from './openai-realtime.options';
import { engineErrorFromServerError, engineErrorFromUpgradeStatus, stringField } from './openai-realtime-server-event';

/**
 * Where a realtime socket may connect: the server's outbound guard. The URL check must come first:
 * Node never calls `lookup` for an IP-literal URL (wss://127.0.0.1/...).
 */
export interface RealtimeConnectionGuard {
  /** Why the URL is refused, or undefined when it may be tried. */
  refusal(url: string): string | undefined;
  /** Resolves host names, refusing private addresses at connect time (no second resolution). */
  lookup: LookupFunction;
}

/** One server event larger than this closes the socket: audio deltas and transcripts are far smaller. */
export const REALTIME_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface RealtimeSocketRequest {
  url: string;
  guard?: RealtimeConnectionGuard;
  /** Carries the API key: never put into an error or log. */
  headers: Record<string, string>;
  sessionUpdate: Record<string, unknown>;
  timeoutMs: number;
  signal: AbortSignal;
}

/** An open, configured socket, ready to hand to a session. */
export interface RealtimeHandshake {
  socket: WebSocket;
  /**
   * ws may emit several messages in one tick, so events that followed `session.updated` before the
   * session attached its own listener are kept here, in order, for the session to replay.
   */
  takeOver(): string[];
}

/**
 * One connection attempt: upgrade, send `session.update`, wait for `session.updated`. Success means
 * the server accepted the configuration, so a bad voice or tool schema fails at connect time with
 * 'bad_request' instead of mid-call. Every failure is an EngineError; the socket is always
 * terminated on failure.
 */
export function openRealtimeSocket(request: RealtimeSocketRequest): Promise<RealtimeHandshake> {
  return new Promise<RealtimeHandshake>((resolve, reject) => {
    if (request.signal.aborted) {
      reject(cancelledError());
      return;
    }
    const refusal = request.guard?.refusal(request.url);
    if (refusal !== undefined) {
      reject(new EngineError(OPENAI_REALTIME_ENGINE, 'endpoint_refused', `Realtime endpoint refused: ${refusal}`, false));
      return;
    }
    // Compression costs CPU on every audio frame for base64 that barely compresses. ws never
    // follows redirects unless told to.
    const socket = new WebSocket(request.url, {
      headers: request.headers,
      perMessageDeflate: false,
      maxPayload: REALTIME_MAX_MESSAGE_BYTES,
      ...(request.guard && { lookup: request.guard.lookup }),
    });
    let settled = false;
    let configured = false;
    const early: string[] = [];

    const finish = (error: EngineError | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        socket.off('message', onMessage);
        socket.terminate();
        reject(error);
        return;
      }
      resolve({
        socket,
        takeOver: () => {
          socket.off('message', onMessage);
          socket.off('close', onClose);
          socket.off('error', onError);
          return early;
        },
      });
    };
    const onAbort = (): void => finish(cancelledError());
    const onMessage = (data: RawData, isBinary: boolean): void => {
      const text = isBinary ? undefined : rawText(data);
      if (configured) {
        if (text !== undefined) early.push(text);
        return;
      }
      const event = text === undefined ? undefined : parseObject(text);
      const type = stringField(event, 'type');
      if (type === 'session.updated') {
        configured = true;
        finish(undefined);
      } else if (type === 'error' && event !== undefined) {
        finish(
          engineErrorFromServerError(event) ??
            new EngineError(OPENAI_REALTIME_ENGINE, 'bad_request', 'Realtime server rejected the session configuration', false),
        );
      }
      // session.created and anything else before configuration is acknowledged carries nothing we need.
    };
    const onClose = (code: number): void => {
      finish(new EngineError(OPENAI_REALTIME_ENGINE, 'unavailable', `Realtime server closed the connection while connecting (code ${code})`, true));
    };
    const onError = (error: Error): void => {
      const code = (error as { code?: unknown }).code;
      if (code === 'OUTBOUND_ADDRESS_REFUSED' || code === 'OUTBOUND_URL_REFUSED') {
        finish(new EngineError(OPENAI_REALTIME_ENGINE, 'endpoint_refused', `Realtime endpoint refused: ${error.message}`, false, { cause: error }));
        return;
      }
      finish(new EngineError(OPENAI_REALTIME_ENGINE, 'unavailable', `Realtime connection failed: ${error.message}`, true, { cause: error }));
    };
    const timer = setTimeout(() => {
      finish(new EngineError(OPENAI_REALTIME_ENGINE, 'timeout', `Realtime connection not ready within ${request.timeoutMs} ms`, true));
    }, request.timeoutMs);

    request.signal.addEventListener('abort', onAbort, { once: true });
    socket.on('unexpected-response', (_req, response) => {
      response.resume();
      finish(engineErrorFromUpgradeStatus(response.statusCode ?? 0));
    });
    socket.on('open', () => socket.send(JSON.stringify(request.sessionUpdate)));
    socket.on('message', onMessage);
    socket.on('close', onClose);
    socket.on('error', onError);
  });
}

export function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** The message as a JSON object, or undefined when it is not one. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function cancelledError(): EngineError {
  return new EngineError(OPENAI_REALTIME_ENGINE, 'cancelled', 'Connecting to the realtime endpoint was cancelled', false);
}
