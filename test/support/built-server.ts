import { spawn, type ChildProcess } from 'node:child_process';

/**
 * What `npm start` runs. The build is brought up to date with the sources once per test run, by
 * the integration and e2e tiers' global setup (apps/cli/build-if-changed.mjs): a built server
 * starts in about a third of the time ts-node takes to compile the sources in every process.
 */
const SERVER_ARGS = ['dist/apps/server/apps/server/src/main.js'] as const;

/**
 * The server as operators run it (`npm start`'s `main.js` in a process of its own, its cluster
 * primary and workers included), with everything it prints kept for the test to read. `env` is
 * added to this process's environment.
 */
export class BuiltServer {
  private printed = '';

  private constructor(readonly child: ChildProcess) {
    const keep = (chunk: Buffer) => (this.printed += chunk.toString());
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static spawn(env: Record<string, string>): BuiltServer {
    const child = spawn(process.execPath, [...SERVER_ARGS], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new BuiltServer(child);
  }

  /**
   * The same, with a terminal for stdout, as when a person runs `npm start` in a shell: util-linux
   * `script` gives the server a pseudo-terminal and copies what it shows to our pipe.
   */
  static spawnOnTerminal(env: Record<string, string>): BuiltServer {
    const command = [process.execPath, ...SERVER_ARGS].map((part) => `'${part}'`).join(' ');
    const child = spawn('script', ['--quiet', '--flush', '--return', '--command', `exec ${command}`, '/dev/null'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new BuiltServer(child);
  }

  /** Resolves once `baseUrl`/health answers 200; fails at once if the process exits first. */
  async healthy(baseUrl: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`the server exited (code ${this.child.exitCode}) before it answered /health:\n${this.printed.slice(-2000)}`);
      try {
        if ((await fetch(`${baseUrl}/health`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`the server did not answer /health within ${timeoutMs} ms`);
  }

  /**
   * Resolves as soon as what the server printed contains `expected` (at once if it already does);
   * fails when the process exits first, or after `timeoutMs`, showing the end of what it printed.
   */
  waitForOutput(expected: string | RegExp, timeoutMs: number): Promise<void> {
    // search() ignores a global pattern's lastIndex, which test() would carry from call to call.
    const seen = () => (typeof expected === 'string' ? this.printed.includes(expected) : this.printed.search(expected) !== -1);
    if (seen()) return Promise.resolve();
    if (this.child.exitCode !== null) return Promise.reject(new Error(`the server had exited (code ${this.child.exitCode}) without printing ${String(expected)}:\n${this.printed.slice(-3000)}`));
    return new Promise((resolve, reject) => {
      const stop = () => {
        clearTimeout(timer);
        this.child.stdout?.off('data', onData);
        this.child.stderr?.off('data', onData);
        this.child.off('close', onClose);
      };
      // Registered after the constructor's listener, so `printed` already holds the chunk.
      const onData = () => {
        if (!seen()) return;
        stop();
        resolve();
      };
      const onClose = () => {
        stop();
        reject(new Error(`the server exited (code ${this.child.exitCode}) without printing ${String(expected)}:\n${this.printed.slice(-3000)}`));
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`the server did not print ${String(expected)} within ${timeoutMs} ms:\n${this.printed.slice(-3000)}`));
      }, timeoutMs);
      this.child.stdout?.on('data', onData);
      this.child.stderr?.on('data', onData);
      this.child.once('close', onClose);
    });
  }

  /**
   * SIGTERM, as an operator stops it, then up to `graceMs` for it to drain and exit; past that,
   * SIGKILL. Resolves true when it exited within the grace (or had already), false when killed.
   */
  async stop(graceMs: number): Promise<boolean> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return true;
    let timer: NodeJS.Timeout | undefined;
    const exited = new Promise<boolean>((resolve) => this.child.once('exit', () => resolve(true)));
    this.child.kill('SIGTERM');
    const graceful = await Promise.race([exited, new Promise<boolean>((resolve) => (timer = setTimeout(resolve, graceMs, false)))]);
    clearTimeout(timer);
    if (!graceful) this.child.kill('SIGKILL');
    return graceful;
  }

  /** Everything the server printed so far, stdout and stderr interleaved as they arrived. */
  get output(): string {
    return this.printed;
  }
}
