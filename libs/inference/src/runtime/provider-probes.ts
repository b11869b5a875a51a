/**
 * Probes run inside an inference worker: can a session be created on a GPU execution provider
 * here? Each creates a session on the tiny probe model and releases it. Where a provider surely
 * cannot work (its libraries are absent), say so without trying: trying makes onnxruntime, or
 * WebGPU's Dawn, print native errors to stderr that no log level silences.
 */
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import type { InferenceDevice } from '../contracts';
import { missingCudaLibraryReason, nvidiaGpuPresent } from './nvidia-gpu';
import { PROBE_MODEL_BASE64 } from './probe-model';

export interface ProbeOutcome {
  available: boolean;
  reason: string;
}

export async function probeProvider(provider: Exclude<InferenceDevice, 'cpu'>): Promise<ProbeOutcome> {
  const backends = ort.listSupportedBackends().map((backend) => backend.name);
  if (!backends.includes(provider)) return { available: false, reason: `onnxruntime-node has no ${provider} backend on ${process.platform}/${process.arch}` };
  const missing = provider === 'cuda' ? missingCudaLibrary() : missingWebGpuLibrary();
  if (missing !== undefined) return { available: false, reason: missing };
  const name = provider === 'cuda' ? 'CUDA' : 'WebGPU';
  try {
    const executionProviders = executionProvidersFor(provider);
    // Severity 3 (errors only): the failure reaches the caller's log as the reason instead.
    const session = await ort.InferenceSession.create(Buffer.from(PROBE_MODEL_BASE64, 'base64'), { executionProviders, logSeverityLevel: 3 });
    await session.release();
    return { available: true, reason: `${name} session created` };
  } catch (error) {
    return { available: false, reason: `creating a ${name} session failed: ${firstLine(error)}` };
  }
}

/**
 * onnxruntime's provider list for sessions on `provider`: what the probe tries is exactly what the
 * worker's sessions then use. onnxruntime adds the CPU provider behind a GPU one itself, for the
 * nodes the GPU one lacks.
 */
export function executionProvidersFor(provider: InferenceDevice): ort.InferenceSession.ExecutionProviderConfig[] {
  if (provider === 'cuda') return [{ name: 'cuda', deviceId: 0 }];
  return [provider];
}

/**
 * The CPU build of onnxruntime-node lacks the CUDA provider library (it is fetched at install
 * time with ONNXRUNTIME_NODE_INSTALL=cuda12); the reason names that only where a GPU could use it.
 */
function missingCudaLibrary(): string | undefined {
  const libraryDir = join(dirname(require.resolve('onnxruntime-node')), '..', 'bin', 'napi-v6', process.platform, process.arch);
  const providerLibrary = process.platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so';
  if (existsSync(join(libraryDir, providerLibrary))) return undefined;
  return missingCudaLibraryReason(providerLibrary, nvidiaGpuPresent());
}

const VULKAN_LOADER = 'libvulkan.so.1';
const SYSTEM_LIBRARY_DIRS = ['/lib', '/usr/lib', '/lib64', '/usr/lib64', `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`];

/**
 * On Linux, WebGPU (Dawn) runs on Vulkan and dlopens the Vulkan loader. Look where the dynamic
 * loader would (LD_LIBRARY_PATH, the ld.so cache, the system folders): without it Dawn only prints
 * "Couldn't load Vulkan" to stderr and finds no adapter. Other platforms are simply tried.
 */
function missingWebGpuLibrary(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const dirs = [...(process.env['LD_LIBRARY_PATH'] ?? '').split(delimiter).filter(Boolean), ...SYSTEM_LIBRARY_DIRS];
  if (dirs.some((dir) => existsSync(join(dir, VULKAN_LOADER)))) return undefined;
  try {
    if (readFileSync('/etc/ld.so.cache').includes(VULKAN_LOADER)) return undefined;
  } catch {
    // No cache: the folders above were the places to look.
  }
  return `${VULKAN_LOADER} not found: WebGPU needs the Vulkan loader (e.g. apt install libvulkan1) and a GPU driver`;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'unknown error';
}
