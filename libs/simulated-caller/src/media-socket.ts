import WebSocket from 'ws';
import { TwilioCallerError } from './twilio-caller.error';

export interface MediaSocketHandlers {
  onMessage(data: WebSocket.RawData, isBinary: boolean): void;
  onClose(code: number, reason: string): void;
  /** Errors after the socket opened (before that, the returned promise rejects instead). */
  onError(error: Error): void;
}

/**
 * Opens the media WebSocket the way Twilio does (signature header on the upgrade) and maps the
 * ways it can fail onto TwilioCallerError: a refused upgrade keeps its HTTP status (a 403 for a
 * bad signature is what robustness tests look for); a refused connection is retryable.
 * Handlers are attached before the handshake so no frame or close can slip past.
 */
export function openMediaSocket(
  url: string,
  headers: Record<string, string>,
  handshakeTimeoutMs: number,
  handlers: MediaSocketHandlers,
): Promise<WebSocket> {
  const socket = new WebSocket(url, { headers, handshakeTimeout: handshakeTimeoutMs });
  socket.on('message', handlers.onMessage);
  socket.on('close', (code, reason) => handlers.onClose(code, reason.toString()));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (request, response) => {
      request.destroy();
      socket.terminate();
      reject(
        new TwilioCallerError('MEDIA_UPGRADE_REJECTED', `The media socket upgrade at ${url} was answered HTTP ${response.statusCode}`, {
          retryable: false,
          httpStatus: response.statusCode,
        }),
      );
    });
    socket.on('error', (error: Error & { code?: string }) => {
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CLOSING) {
        handlers.onError(error);
        return;
      }
      const refused = error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET';
      reject(
        new TwilioCallerError(refused ? 'SERVER_UNREACHABLE' : 'MEDIA_SOCKET_ERROR', `Media socket ${url}: ${error.code ?? error.message}`, {
          retryable: refused,
          cause: error,
        }),
      );
    });
  });
}
