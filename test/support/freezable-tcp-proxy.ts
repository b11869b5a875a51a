import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP relay between a server under test and its database that can be frozen: while frozen it
 * keeps every connection open and relays nothing, so the database "answers nothing", the way a
 * wedged or unreachable host behaves (an outage that refuses connections is the easy case).
 */
export class FreezableTcpProxy {
  private frozen = false;
  private readonly sockets = new Set<Socket>();
  private readonly held: Array<() => void> = [];

  private constructor(private readonly server: Server) {}

  static async start(targetHost: string, targetPort: number): Promise<FreezableTcpProxy> {
    const server = createServer();
    const proxy = new FreezableTcpProxy(server);
    server.on('connection', (client) => proxy.relay(client, targetHost, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const release of this.held.splice(0)) release();
  }

  /** Cuts every open connection (the pool must open new ones, which a frozen proxy never answers). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, host: string, port: number): void {
    const upstream = createConnection({ host, port });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    const pipe = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (!this.frozen) to.write(chunk);
        else this.held.push(() => to.write(chunk));
      });
      from.on('close', () => to.destroy());
    };
    pipe(client, upstream);
    pipe(upstream, client);
  }
}
