/**
 * Whether this machine has an NVIDIA GPU, for what the CUDA probe says: the hint to install
 * onnxruntime-node's CUDA build helps only where there is a GPU for it to use. Looked for without
 * loading a driver: the device node, the driver's GPU list, or its nvidia-smi (on PATH, or where
 * WSL puts it).
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const NVIDIA_GPU_SIGNS = ['/dev/nvidia0', '/proc/driver/nvidia/gpus', '/usr/lib/wsl/lib/nvidia-smi'];

export function nvidiaGpuPresent(exists: (path: string) => boolean = existsSync, path = process.env['PATH'] ?? '', platform = process.platform): boolean {
  if (NVIDIA_GPU_SIGNS.some((sign) => exists(sign))) return true;
  const smi = platform === 'win32' ? 'nvidia-smi.exe' : 'nvidia-smi';
  return path.split(delimiter).some((dir) => dir !== '' && exists(join(dir, smi)));
}

/**
 * Why CUDA cannot run when the installed onnxruntime-node lacks its CUDA provider library (the
 * CPU build, as `ONNXRUNTIME_NODE_INSTALL=skip` installs it): with a GPU, how to get the library;
 * without one, only that (the CUDA build would not help, and the README installs with `skip`).
 */
export function missingCudaLibraryReason(providerLibrary: string, gpuPresent: boolean): string {
  if (!gpuPresent) return 'no NVIDIA GPU on this machine (no /dev/nvidia0, no nvidia-smi)';
  return `onnxruntime-node CPU build: ${providerLibrary} is missing; install with ONNXRUNTIME_NODE_INSTALL=cuda12`;
}
