import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The server's entry as `npm start` runs it (after `npm run build`). */
export const BUILT_SERVER = join('dist', 'apps', 'server', 'apps', 'server', 'src', 'main.js');
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessSample {
  cpuSeconds: number;
  rssBytes: number;
  atMs: number;
}

/**
 * The built server as its own process, started the way operators run it. The bench measures it
 * from outside: its CPU time and resident memory come from /proc, its answers over sockets.
 */
export class ServerProcess {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => this.keep(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.keep(chunk));
  }

  /** `nodeArgs`: extra Node options for the server (and its workers), e.g. `--cpu-prof` to profile it. */
  static async start(env: Record<string, string>, port: number, nodeArgs: string[] = []): Promise<ServerProcess> {
    if (!existsSync(BUILT_SERVER)) throw new Error(`${BUILT_SERVER} is missing: run npm run build first`);
    const child = spawn(process.execPath, [...nodeArgs, BUILT_SERVER], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const server = new ServerProcess(child, `http://127.0.0.1:${port}`);
    await server.waitForHealth(120_000);
    return server;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** The last lines the server printed (for a failed run's report). */
  get tail(): string {
    return this.output.slice(-3000);
  }

  /**
   * CPU seconds used so far and resident memory now, read from /proc (Linux), summed over the
   * server and its descendants (a cluster's primary and workers). CPU of a worker that already
   * exited is not counted: the bench keeps every worker alive.
   */
  sample(): ProcessSample {
    let ticks = 0;
    let rssKb = 0;
    for (const pid of processTree(this.pid)) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(fields[11]) + Number(fields[12]);
        rssKb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      } catch {
        // it exited between the listing and the read
      }
    }
    return { cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND, rssBytes: rssKb * 1024, atMs: performance.now() };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }

  private keep(chunk: Buffer): void {
    this.output = (this.output + chunk.toString()).slice(-20_000);
  }

  private async waitForHealth(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`the server exited (code ${this.child.exitCode}):\n${this.tail}`);
      try {
        if ((await fetch(`${this.baseUrl}/health/ready`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the server did not become ready within ${timeoutMs} ms:\n${this.tail}`);
  }
}

/** The pid and all its descendants, from the parent pid in each /proc/<pid>/stat. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone already
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] as number) ?? []));
  return tree;
}
