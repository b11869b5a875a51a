import { missingCudaLibraryReason, nvidiaGpuPresent } from './nvidia-gpu';

const only = (...present: string[]) => (path: string) => present.includes(path);
const LIBRARY = 'libonnxruntime_providers_cuda.so';

describe('nvidiaGpuPresent', () => {
  it("sees a GPU by its device node, its driver's GPU list, or nvidia-smi on PATH", () => {
    expect(nvidiaGpuPresent(only('/dev/nvidia0'), '', 'linux')).toBe(true);
    expect(nvidiaGpuPresent(only('/proc/driver/nvidia/gpus'), '', 'linux')).toBe(true);
    expect(nvidiaGpuPresent(only('/opt/nvidia/bin/nvidia-smi'), '/usr/bin:/opt/nvidia/bin', 'linux')).toBe(true);
  });

  it('sees none on a machine with none of them', () => {
    expect(nvidiaGpuPresent(only(), '/usr/local/bin:/usr/bin:/bin', 'linux')).toBe(false);
  });
});

describe('missingCudaLibraryReason (the CPU build of onnxruntime-node)', () => {
  it('with an NVIDIA GPU: says how to install the CUDA build', () => {
    expect(missingCudaLibraryReason(LIBRARY, true)).toBe(`onnxruntime-node CPU build: ${LIBRARY} is missing; install with ONNXRUNTIME_NODE_INSTALL=cuda12`);
  });

  it('without one: says there is no GPU, and gives no install hint that could not help', () => {
    const reason = missingCudaLibraryReason(LIBRARY, false);
    expect(reason).toBe('no NVIDIA GPU on this machine (no /dev/nvidia0, no nvidia-smi)');
    expect(reason).not.toContain('ONNXRUNTIME_NODE_INSTALL');
  });
});
