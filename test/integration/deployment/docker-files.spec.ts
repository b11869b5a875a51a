import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAppConfig } from '@switchboard/config';
import { DRAIN_MESSAGE_GRACE_MS } from '../../../apps/server/src/lifecycle/drain-allowance';

/**
 * No Docker engine runs here, so docker/ is checked against what CI does run: the image must start
 * the same file `npm start` starts (it once named one the build does not produce), and compose's
 * grace period must cover SIGTERM's drain, or every `docker compose stop` cuts callers off.
 */
const ROOT = join(__dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('docker/', () => {
  it("the image's CMD runs what npm start runs", () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['start'];
    const cmd = /^CMD (\[.*\])$/m.exec(read('docker/Dockerfile'))?.[1];
    expect(cmd).toBeDefined();
    expect((JSON.parse(cmd as string) as string[]).join(' ')).toBe(start);
  });

  it("compose's stop grace period outlasts the drain, its message and the shutdown bound", () => {
    const compose = read('docker/compose.yaml');
    const grace = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]);
    const drain = Number(/DRAIN_TIMEOUT_S: \$\{DRAIN_TIMEOUT_S:-(\d+)\}/.exec(compose)?.[1]);
    // compose leaves SHUTDOWN_TIMEOUT_MS at its default.
    const shutdownS = loadAppConfig({}).shutdownTimeoutMs / 1000;
    expect(drain).toBeGreaterThan(0);
    expect(grace).toBeGreaterThan(drain + DRAIN_MESSAGE_GRACE_MS / 1000 + shutdownS);
  });
});
