import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';

/*
 * Password authentication in front of pglite-socket, which has none: it hands the client's
 * StartupMessage straight to PGlite, which answers AuthenticationOk to any user. Without this, any
 * local process could connect to the loopback port and, say, insert an admin API key.
 *
 * This listener speaks the start of the Postgres protocol itself: it answers SSLRequest/GSSENCRequest
 * with 'N', reads the StartupMessage, asks for an MD5 password (AuthenticationMD5Password with a
 * random salt: every Postgres client supports it, and on loopback the hash is never on a network),
 * and checks the answer in constant time. A wrong password gets FATAL 28P01 and the socket is
 * closed. Only then is the socket joined to pglite-socket's listener, which listens on a Unix
 * socket in a private (0700) folder, with the StartupMessage replayed, so PGlite's own AuthenticationOk
 * and session parameters reach the client as if no one were in between.
 *
 * Bounded: a handshake must finish within EMBEDDED_HANDSHAKE_TIMEOUT_MS, messages larger than Postgres's own
 * limits are refused, and at most MAX_PENDING_HANDSHAKES unauthenticated sockets are held at once
 * (authenticated ones count against pglite-socket's maxConnections).
 */

const PROTOCOL_3_0 = 196_608;
const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const CANCEL_REQUEST = 80_877_102;
/** Postgres refuses startup packets over 10 000 bytes (MAX_STARTUP_PACKET_LENGTH); so do we. */
const MAX_STARTUP_BYTES = 10_000;
/** An MD5 answer is 36 bytes; anything much larger is not one. */
const MAX_PASSWORD_MESSAGE_BYTES = 1_024;
/** Generous: the worker thread may be busy with a query for a moment while a client connects. */
export const EMBEDDED_HANDSHAKE_TIMEOUT_MS = 10_000;
const MAX_PENDING_HANDSHAKES = 16;

export interface AuthenticatingFrontOptions {
  host: string;
  port: number;
  password: string;
  /** Where pglite-socket listens (a Unix socket only this process's user can reach). */
  innerPath: string;
  /** A client that has not authenticated by then is disconnected (default EMBEDDED_HANDSHAKE_TIMEOUT_MS). */
  handshakeTimeoutMs?: number;
}

export interface AuthenticatingFront {
  readonly port: number;
  /** Stops accepting and destroys every socket, pending or joined. */
  close(): Promise<void>;
}

export async function startAuthenticatingFront(options: AuthenticatingFrontOptions): Promise<AuthenticatingFront> {
  const sockets = new Set<Socket>();
  let pending = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.setNoDelay(true); // replies are small messages a client waits for
    socket.on('error', () => socket.destroy());
    if (pending >= MAX_PENDING_HANDSHAKES) {
      socket.destroy();
      return;
    }
    pending++;
    let counted = true;
    const settle = () => {
      if (counted) pending--;
      counted = false;
    };
    socket.once('close', settle);
    handshake(socket, options, sockets, settle);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the embedded database front has no TCP address');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function handshake(client: Socket, options: AuthenticatingFrontOptions, sockets: Set<Socket>, settle: () => void): void {
  let buffer = Buffer.alloc(0);
  let startup: Buffer | undefined;
  let user = '';
  const salt = randomBytes(4);
  const timer = setTimeout(() => client.destroy(), options.handshakeTimeoutMs ?? EMBEDDED_HANDSHAKE_TIMEOUT_MS);
  client.once('close', () => clearTimeout(timer));

  // The handshake timer keeps running: it destroys a refused client that never closes its side.
  const refuse = (code: string, message: string) => {
    client.removeListener('data', onData);
    client.end(errorResponse(code, message));
  };

  const onData = (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (buffer.length > MAX_STARTUP_BYTES + MAX_PASSWORD_MESSAGE_BYTES) return refuse('08P01', 'handshake too large');
    while (startup === undefined) {
      if (buffer.length < 8) return;
      const length = buffer.readInt32BE(0);
      const code = buffer.readInt32BE(4);
      if (length === 8 && (code === SSL_REQUEST || code === GSSENC_REQUEST)) {
        client.write('N'); // no encryption: loopback only
        buffer = buffer.subarray(8);
        continue;
      }
      if (code === CANCEL_REQUEST) return refuse('0A000', 'cancel requests are not supported');
      if (code !== PROTOCOL_3_0) return refuse('0A000', 'unsupported frontend protocol');
      if (length < 8 || length > MAX_STARTUP_BYTES) return refuse('08P01', 'invalid length of startup packet');
      if (buffer.length < length) return;
      startup = Buffer.from(buffer.subarray(0, length));
      buffer = buffer.subarray(length);
      user = startupParameter(startup, 'user') ?? '';
      if (!user) return refuse('28000', 'no PostgreSQL user name specified in startup packet');
      client.write(md5PasswordRequest(salt));
    }
    if (buffer.length < 5) return;
    const type = buffer[0];
    const length = buffer.readInt32BE(1);
    if (type !== 0x70 /* 'p' */ || length < 5 || length > MAX_PASSWORD_MESSAGE_BYTES) {
      return refuse('08P01', 'expected a password message');
    }
    if (buffer.length < 1 + length) return;
    const answer = buffer.subarray(5, length); // without the trailing NUL
    const rest = buffer.subarray(1 + length);
    if (!passwordMatches(answer, options.password, user, salt)) {
      return refuse('28P01', `password authentication failed for user "${user}"`);
    }
    clearTimeout(timer);
    client.removeListener('data', onData);
    join(client, options.innerPath, Buffer.concat([startup, rest]), sockets, settle);
  };
  client.on('data', onData);
}

/** Hands an authenticated client to pglite-socket, replaying what it sent that PGlite must see. */
function join(client: Socket, innerPath: string, replay: Buffer, sockets: Set<Socket>, settle: () => void): void {
  client.pause();
  const inner = connect(innerPath);
  sockets.add(inner);
  inner.once('close', () => {
    sockets.delete(inner);
    client.destroy();
  });
  inner.on('error', () => inner.destroy());
  client.once('close', () => inner.destroy());
  inner.once('connect', () => {
    settle();
    inner.write(replay);
    client.pipe(inner);
    inner.pipe(client);
  });
}

function passwordMatches(answer: Buffer, password: string, user: string, salt: Buffer): boolean {
  const inner = createHash('md5').update(password + user).digest('hex');
  const expected = Buffer.from(`md5${createHash('md5').update(Buffer.concat([Buffer.from(inner), salt])).digest('hex')}`);
  return answer.length === expected.length && timingSafeEqual(answer, expected);
}

function startupParameter(startup: Buffer, name: string): string | undefined {
  const fields = startup.subarray(8).toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function md5PasswordRequest(salt: Buffer): Buffer {
  const message = Buffer.alloc(13);
  message.write('R', 0);
  message.writeInt32BE(12, 1);
  message.writeInt32BE(5, 5); // AuthenticationMD5Password
  salt.copy(message, 9);
  return message;
}

function errorResponse(code: string, message: string): Buffer {
  const body = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}
