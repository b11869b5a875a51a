import type { FliteJobMessage } from './flite-worker-protocol';
import { MemoryWasi, WasiExit } from './memory-wasi';

/** A compiled WebAssembly module (opaque here). */
export type FliteWasmModule = object;

interface FliteInstance {
  exports: { memory: { readonly buffer: ArrayBuffer }; _start(): void };
}

/** The slice of the WebAssembly API used here (this project's TypeScript lib has no WebAssembly typings). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => FliteWasmModule;
  Instance: new (module: FliteWasmModule, imports: Record<string, unknown>) => FliteInstance;
}

const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const OUTPUT_PATH = 'out.wav';

/** Compiles the flite module (20 MB; V8 compiles it lazily, about 40 ms up front). */
export function compileFliteModule(bytes: Uint8Array): FliteWasmModule {
  return new wasmApi.Module(bytes);
}

/**
 * Runs the flite command once: `flite -voice V [--setf duration_stretch=S] -t TEXT -o out.wav`, and
 * returns the WAV it wrote (to memory, see MemoryWasi). A WASI command's `_start` runs once per
 * instance, so each sentence gets a fresh instance of the module compiled once per worker (about
 * 13 ms, next to 60-80 ms of synthesis). Synchronous and CPU-bound: only ever called inside a
 * worker thread.
 */
export function runFliteOnce(module: FliteWasmModule, job: FliteJobMessage): Uint8Array {
  // Each voice has its own default pace; duration_stretch is only set when asked to change it.
  const stretch = job.durationStretch === 1 ? [] : ['--setf', `duration_stretch=${job.durationStretch}`];
  const wasi = new MemoryWasi(['flite', '-voice', job.voiceArgument, ...stretch, '-t', job.text, '-o', OUTPUT_PATH]);
  const instance = new wasmApi.Instance(module, { wasi_snapshot_preview1: wasi.imports });
  wasi.bind(instance.exports.memory);
  let exitCode = 0;
  try {
    instance.exports._start();
  } catch (error) {
    if (!(error instanceof WasiExit)) throw error;
    exitCode = error.code;
  }
  const stderr = wasi.stderr.trim().slice(-300);
  if (exitCode !== 0) throw new Error(`flite exited with code ${exitCode}${stderr ? `: ${stderr}` : ''}`);
  const wav = wasi.fileContents(OUTPUT_PATH);
  if (wav === undefined || wav.length === 0) throw new Error(`flite wrote no audio${stderr ? `: ${stderr}` : ''}`);
  return wav;
}
