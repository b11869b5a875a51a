import { BuiltServer } from './built-server';

/** One drain as the rolling restart saw it. */
export interface DrainRecord {
  instance: string;
  /** SIGTERM to process exit. */
  seconds: number;
  exitCode: number | null;
  /** Live calls when the drain began, and those ended with the drain message at the bound (the server's "drained" log line). */
  callsAtStart: number | null;
  endedWithMessage: number | null;
}

/**
 * Several server instances, each `main.ts` in a process of its own on a fixed loopback port (the
 * load balancer's configuration names the ports), sharing `env`. An instance is restarted on its
 * own port, as a deploy replaces a pod or a VM's service.
 */
export class ServerFleet {
  readonly instances: Array<{ name: string; port: number; server: BuiltServer }> = [];
  /** Everything each instance printed, every run of it (a restarted instance's earlier output included). */
  private readonly earlierOutput = new Map<string, string>();

  private constructor(private readonly env: (port: number) => Record<string, string>) {}

  /** Starts an instance on each of `ports` (named app1, app2, ...) and waits for all of them. */
  static async start(ports: number[], env: (port: number) => Record<string, string>): Promise<ServerFleet> {
    const fleet = new ServerFleet(env);
    ports.forEach((port, index) => fleet.instances.push({ name: `app${index + 1}`, port, server: BuiltServer.spawn(env(port)) }));
    await Promise.all(fleet.instances.map((instance) => instance.server.healthy(`http://127.0.0.1:${instance.port}`, 180_000)));
    return fleet;
  }

  /** SIGTERM, then waits (up to `timeoutMs`) for the process to drain and exit; `whileDraining` runs once the signal is sent. */
  async drain(name: string, timeoutMs: number, whileDraining: () => Promise<void> = async () => undefined): Promise<DrainRecord> {
    const instance = this.instance(name);
    const child = instance.server.child;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const sentAtMs = performance.now();
    child.kill('SIGTERM');
    await whileDraining();
    let timer: NodeJS.Timeout | undefined;
    const exitCode = await Promise.race([
      exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name} did not exit within ${timeoutMs} ms of SIGTERM:\n${instance.server.output.slice(-3000)}`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    const seconds = (performance.now() - sentAtMs) / 1000;
    const drained = instance.server.output.split('\n').find((line) => line.includes('"msg":"drained"'));
    const report = drained === undefined ? null : (JSON.parse(drained) as { callsAtStart?: number; endedWithMessage?: number });
    this.earlierOutput.set(name, (this.earlierOutput.get(name) ?? '') + instance.server.output);
    return { instance: name, seconds, exitCode, callsAtStart: report?.callsAtStart ?? null, endedWithMessage: report?.endedWithMessage ?? null };
  }

  /** Starts the instance again on its port and waits for /health. */
  async restart(name: string): Promise<void> {
    const instance = this.instance(name);
    instance.server = BuiltServer.spawn(this.env(instance.port));
    await instance.server.healthy(`http://127.0.0.1:${instance.port}`, 180_000);
  }

  /** What every instance printed, across restarts. */
  output(name: string): string {
    return (this.earlierOutput.get(name) ?? '') + this.instance(name).server.output;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.instances.map(async ({ server }) => {
        if (server.child.exitCode !== null || server.child.signalCode !== null) return;
        const exited = new Promise((resolve) => server.child.once('exit', resolve));
        server.child.kill('SIGKILL');
        await exited;
      }),
    );
  }

  private instance(name: string) {
    const instance = this.instances.find((candidate) => candidate.name === name);
    if (!instance) throw new Error(`no instance ${name}`);
    return instance;
  }
}
