import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The server as operators run it (`main.ts` in a process of its own, its cluster primary and
 * workers included), started from the TypeScript sources with ts-node, with everything it prints
 * kept for the test to read. `env` is added to this process's environment.
 */
export class ServerFromSource {
  private printed = '';

  private constructor(readonly child: ChildProcess) {
    const keep = (chunk: Buffer) => (this.printed += chunk.toString());
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static spawn(env: Record<string, string>): ServerFromSource {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/server/src/main.ts'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ServerFromSource(child);
  }

  /** Everything the server printed so far, stdout and stderr interleaved as they arrived. */
  get output(): string {
    return this.printed;
  }
}
