import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { freeLoopbackPort } from '@switchboard/testing';

/** The configuration operators are given (docker/haproxy/haproxy.cfg): the test runs exactly that file. */
export const SHIPPED_HAPROXY_CONFIG = join(__dirname, '..', '..', 'docker', 'haproxy', 'haproxy.cfg');

/**
 * Debian's package (`apt-get install haproxy`, done by .ci/run): where it is on PATH, or a failure
 * that says what to install instead of spawn's "ENOENT".
 */
export function haproxyExecutable(path = process.env['PATH'] ?? ''): string {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'haproxy');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  throw new Error("haproxy is missing (not on PATH): install Debian's haproxy package (apt-get install haproxy), as .ci/run does");
}

/** What HAProxy's stats say about one backend server ("UP", "DOWN", "MAINT", "UP 1/2", ...). */
export interface BackendServerState {
  name: string;
  status: string;
  /** Sessions currently open to it (HTTP requests in flight and WebSocket tunnels). */
  currentSessions: number;
  /** Sessions it was given since HAProxy started. */
  totalSessions: number;
}

/**
 * Debian's HAProxy running the shipped configuration in the foreground, in front of the given
 * loopback ports (app1..app3), with its stats page on a port of its own.
 */
export class HaproxyProcess {
  private printed = '';

  private constructor(
    private readonly child: ChildProcess,
    /** Where callers' traffic goes, e.g. http://127.0.0.1:41234. */
    readonly url: string,
    private readonly statsUrl: string,
  ) {
    const keep = (chunk: Buffer) => (this.printed += chunk.toString());
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static async start(backendPorts: readonly [number, number, number]): Promise<HaproxyProcess> {
    const port = await freeLoopbackPort();
    const statsPort = await freeLoopbackPort();
    const child = spawn(haproxyExecutable(), ['-db', '-f', SHIPPED_HAPROXY_CONFIG], {
      env: {
        ...process.env,
        SWITCHBOARD_BIND: `127.0.0.1:${port}`,
        SWITCHBOARD_APP1: `127.0.0.1:${backendPorts[0]}`,
        SWITCHBOARD_APP2: `127.0.0.1:${backendPorts[1]}`,
        SWITCHBOARD_APP3: `127.0.0.1:${backendPorts[2]}`,
        HAPROXY_STATS_BIND: `127.0.0.1:${statsPort}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const haproxy = new HaproxyProcess(child, `http://127.0.0.1:${port}`, `http://127.0.0.1:${statsPort}/stats`);
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`haproxy exited (code ${child.exitCode}):\n${haproxy.printed}`);
      try {
        await haproxy.servers();
        return haproxy;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`haproxy's stats page did not answer: ${(error as Error).message}\n${haproxy.printed}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** The backend's servers as HAProxy sees them now (its stats page in CSV). */
  async servers(): Promise<BackendServerState[]> {
    const response = await fetch(`${this.statsUrl};csv`);
    if (!response.ok) throw new Error(`stats answered ${response.status}`);
    const [header, ...rows] = (await response.text()).trim().split('\n');
    const columns = (header ?? '').replace(/^# /, '').split(',');
    const at = (name: string) => columns.indexOf(name);
    return rows
      .map((row) => row.split(','))
      .filter((cells) => cells[at('pxname')] === 'switchboard' && !['FRONTEND', 'BACKEND'].includes(cells[at('svname')] ?? ''))
      .map((cells) => ({
        name: cells[at('svname')] ?? '',
        status: cells[at('status')] ?? '',
        currentSessions: Number(cells[at('scur')]),
        totalSessions: Number(cells[at('stot')]),
      }));
  }

  /** Resolves once HAProxy reports `server` in `status` (e.g. 'UP' after a restart, 'DOWN' once draining). */
  async waitForStatus(server: string, status: 'UP' | 'DOWN', timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = (await this.servers()).find((candidate) => candidate.name === server);
      if (state?.status === status) return;
      if (Date.now() > deadline) throw new Error(`haproxy did not see ${server} ${status} within ${timeoutMs} ms (it says ${state?.status})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  get output(): string {
    return this.printed;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
