import { createHash } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One file the fake Hub serves at `/<repo>/resolve/<revision>/<path>`. */
export interface HubFixtureFile {
  repo: string;
  revision: string;
  path: string;
  content: Buffer;
  /**
   * Served like a large file on the real Hub: the resolve URL answers 302 with `X-Linked-Etag`
   * (sha256) and `X-Linked-Size`, and the bytes come from a CDN path.
   */
  lfs?: boolean;
  /** Publish this sha256 instead of the content's (to test a mismatch). */
  publishedSha256?: string;
}

export interface RecordedHubRequest {
  method: string;
  /** The URL path asked for (a resolve URL, or the CDN path a redirect pointed to). */
  path: string;
  /** The repository file it resolved to, if any. */
  file: string | undefined;
  range: string | undefined;
  authorization: string | undefined;
  status: number;
}

export interface HubFileServerOptions {
  files: HubFixtureFile[];
  /** Answer every ranged request with 200 and the whole file, like servers without Range support. */
  ignoreRange?: boolean;
  /** Refuse requests (401) unless they carry `Authorization: Bearer <token>`. */
  requireToken?: string;
}

/**
 * A real HTTP server on 127.0.0.1 that serves files the way the Hugging Face Hub does (resolve
 * URLs, Range requests, LFS redirects with published hashes), with injected faults: a connection
 * dropped or stalled mid-file, and Range support switched off.
 */
export class HubFileServer {
  readonly requests: RecordedHubRequest[] = [];
  private readonly server: Server;
  private readonly files: HubFixtureFile[];
  private readonly dropAfterBytes = new Map<string, number>();
  private readonly stallAfterBytes = new Map<string, number>();
  private ignoreRange: boolean;
  private port = 0;

  constructor(private readonly options: HubFileServerOptions) {
    this.files = options.files;
    this.ignoreRange = options.ignoreRange ?? false;
    this.server = createServer((request, response) => this.handle(request, response));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Base URL to use as HF_ENDPOINT. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The next download of `path` sends this many body bytes, then the connection is destroyed. */
  dropConnectionAfter(path: string, bytes: number): void {
    this.dropAfterBytes.set(path, bytes);
  }

  /** The next download of `path` sends this many body bytes, then sends nothing more (the socket stays open). */
  stallAfter(path: string, bytes: number): void {
    this.stallAfterBytes.set(path, bytes);
  }

  setIgnoreRange(ignore: boolean): void {
    this.ignoreRange = ignore;
  }

  /** GET requests for one repository file, redirects and CDN fetches alike, in order. */
  downloadsOf(path: string): RecordedHubRequest[] {
    return this.requests.filter((request) => request.method === 'GET' && request.file === path);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const url = decodeURIComponent((request.url ?? '').split('?')[0] ?? '');
    const cdn = /^\/cdn\/(\d+)$/.exec(url);
    const file = cdn
      ? this.files[Number(cdn[1])]
      : this.files.find((candidate) => url === `/${candidate.repo}/resolve/${candidate.revision}/${candidate.path}`);
    const record = (status: number): void => {
      this.requests.push({
        method: request.method ?? 'GET',
        path: request.url ?? '',
        file: file?.path,
        range: request.headers.range,
        authorization: request.headers.authorization,
        status,
      });
    };
    if (this.options.requireToken !== undefined && request.headers.authorization !== `Bearer ${this.options.requireToken}`) {
      record(401);
      response.writeHead(401, { 'content-type': 'text/plain' }).end('Invalid credentials');
      return;
    }
    if (!file) {
      record(404);
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    if (file.lfs && !cdn) {
      record(302);
      response.writeHead(302, {
        location: `/cdn/${this.files.indexOf(file)}`,
        'x-linked-etag': `"${file.publishedSha256 ?? createHash('sha256').update(file.content).digest('hex')}"`,
        'x-linked-size': String(file.content.length),
      });
      response.end();
      return;
    }
    this.sendBytes(request, response, file, record);
  }

  private sendBytes(request: IncomingMessage, response: ServerResponse, file: HubFixtureFile, record: (status: number) => void): void {
    const size = file.content.length;
    const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
    let start = 0;
    let status = 200;
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'accept-ranges': this.ignoreRange ? 'none' : 'bytes' };
    if (range?.[1] && !this.ignoreRange) {
      start = Number(range[1]);
      if (start >= size) {
        record(416);
        response.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${size - 1}/${size}`;
    }
    headers['content-length'] = String(size - start);
    record(status);
    response.writeHead(status, headers);
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    const body = file.content.subarray(start);
    const drop = this.dropAfterBytes.get(file.path);
    const stall = this.stallAfterBytes.get(file.path);
    if (drop !== undefined) {
      this.dropAfterBytes.delete(file.path);
      // Flush what fits, then kill the socket like a network failure (no clean end of the body).
      response.write(body.subarray(0, drop), () => setTimeout(() => response.socket?.destroy(), 20));
      return;
    }
    if (stall !== undefined) {
      this.stallAfterBytes.delete(file.path);
      response.write(body.subarray(0, stall));
      return;
    }
    response.end(body);
  }
}
