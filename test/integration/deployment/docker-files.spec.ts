import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAppConfig } from '@switchboard/config';
import { DRAIN_MESSAGE_GRACE_MS } from '../../../apps/server/src/server-drain/drain-allowance';

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
    // npm's script execs node (so SIGTERM reaches the server: npm-start-signals.spec.ts); the image runs node itself.
    expect((JSON.parse(cmd as string) as string[]).join(' ')).toBe(start?.replace(/^exec /, ''));
  });

  it('the CUDA image builds the app as the CPU image does and runs the same command', () => {
    const stages = (file: string) => read(file).split(/^FROM /m).slice(1);
    const instructions = (stage: string) => stage.split('\n').filter((line) => /^(COPY|RUN npm|CMD|HEALTHCHECK|USER|EXPOSE|WORKDIR)/.test(line));
    const [cpuBuild, cpuRuntime] = stages('docker/Dockerfile');
    const [cudaBuild, cudaRuntime] = stages('docker/cuda.Dockerfile');
    expect(instructions(cudaBuild!)).toEqual(instructions(cpuBuild!));
    // The runtime stage copies node itself in first; everything else is the CPU image's.
    expect(instructions(cudaRuntime!).filter((line) => !line.includes('/usr/local/bin/node'))).toEqual(instructions(cpuRuntime!));
  });

  it('the CUDA image installs the CUDA provider, fails its build without it, and runs on CUDA 12 with cuDNN', () => {
    const file = read('docker/cuda.Dockerfile');
    expect(file).toMatch(/ONNXRUNTIME_NODE_INSTALL=cuda12 node script\/install/);
    expect(file).toMatch(/test -f bin\/napi-v6\/linux\/x64\/libonnxruntime_providers_cuda\.so/);
    expect(file).toMatch(/^FROM nvidia\/cuda:12\.[\d.]+-cudnn-runtime-/m);
    // WebGPU (Dawn over Vulkan) needs the loader and the driver's graphics capability.
    expect(file).toMatch(/libvulkan1/);
    expect(file).toMatch(/NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics/);
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
