import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on a loopback address for the guard's specs. It records every TCP connection
 * as well as every request: "the server saw nothing" has to mean no socket reached it at all.
 */
export interface LocalHttpServer {
  readonly host: string;
  readonly port: number;
  /** Accepted TCP connections. */
  readonly connections: number;
  /** Request paths, in arrival order. */
  readonly paths: readonly string[];
  url(path?: string): string;
  close(): Promise<void>;
}

export type LocalHandler = (request: IncomingMessage, response: ServerResponse) => void;

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startLocalHttpServer(handler: LocalHandler, host = '127.0.0.1', port = 0): Promise<LocalHttpServer> {
  const paths: string[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    handler(request, response);
  });
  server.on('connection', () => connections++);
  const address = await listen(server, host, port);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port: address.port,
    get connections() {
      return connections;
    },
    paths,
    url: (path = '/') => `http://${urlHost}:${address.port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
