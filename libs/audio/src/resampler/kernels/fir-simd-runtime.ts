import { FIR_SIMD_WASM_BASE64 } from './fir-simd.wasm';

/**
 * The one instance of the SIMD FIR kernel (fir-simd.wat) per process (per worker thread: each
 * isolate loads its own), and its one memory, shared by every resampler:
 *
 *   [0, 16)            unused (address 0 stays free)
 *   [16, scratch)      tap tables, appended once per filter design and never freed (designs are
 *                      cached per ratio for the life of the process, resampler-plan.ts)
 *   [scratch, end)     scratch: a resampler copies its state and input here, runs the kernels and
 *                      copies the results out within one process() call
 *
 * Sharing is safe because JavaScript runs one call at a time per isolate and process() is
 * synchronous: no resampler keeps anything in scratch between calls. Hundreds of resamplers
 * therefore cost one small module and a memory the size of the largest frame, not an instance each.
 */

/** The slice of the WebAssembly API used here (this project's TypeScript lib has no WebAssembly typings). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => unknown;
  Instance: new (module: unknown, imports: object) => { readonly exports: unknown };
}

interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** fir-simd.wat's exports; addresses and steps in bytes, counts in samples (see the .wat). */
export interface FirSimdKernel {
  readonly memory: WasmMemory;
  firStrided(x: number, step: number, count: number, taps: number, vecs: number, out: number, outStep: number): void;
  firPolyphase(x: number, rows: number, rowBytes: number, vecs: number, count: number, phase: number, phaseStep: number, newestStep: number, phases: number, out: number): void;
  i16ToF32(src: number, dst: number, n: number): void;
  f32ToI16(src: number, dst: number, n: number): void;
}

const PAGE_BYTES = 65536;
const FIRST_TABLE = 16;
// Scratch starts on a cache line.
const SCRATCH_ALIGN = 64;

export class FirSimdHeap {
  /** Views of the memory; replaced when it grows (growing detaches the old ones). */
  f32!: Float32Array;
  i16!: Int16Array;
  /** Byte address where scratch starts. */
  scratch = FIRST_TABLE;
  private tablesEnd = FIRST_TABLE;

  constructor(readonly kernel: FirSimdKernel) {
    this.refreshViews();
  }

  /** Copies a tap table (a multiple of 4 taps) in; returns its byte address (16-byte aligned). */
  addTable(taps: Float32Array): number {
    const address = this.tablesEnd;
    this.tablesEnd += taps.length * 4;
    this.scratch = Math.ceil(this.tablesEnd / SCRATCH_ALIGN) * SCRATCH_ALIGN;
    this.ensureBytes(this.scratch);
    this.f32.set(taps, address >> 2);
    return address;
  }

  /** Makes sure `bytes` of scratch exist (grows the memory, and so replaces the views, if not). */
  reserveScratch(bytes: number): void {
    this.ensureBytes(this.scratch + bytes);
  }

  private ensureBytes(bytes: number): void {
    const have = this.kernel.memory.buffer.byteLength;
    if (bytes <= have) return;
    // Grow by at least half again, so a stream of slightly longer calls does not grow every time.
    const want = Math.max(bytes, have + (have >> 1));
    this.kernel.memory.grow(Math.ceil((want - have) / PAGE_BYTES));
    this.refreshViews();
  }

  private refreshViews(): void {
    this.f32 = new Float32Array(this.kernel.memory.buffer);
    this.i16 = new Int16Array(this.kernel.memory.buffer);
  }
}

// undefined: not tried yet; null: this runtime has no WebAssembly SIMD.
let heap: FirSimdHeap | null | undefined;

/** Whether the SIMD kernel can run here (WebAssembly with the SIMD proposal; Node >= 16.4). */
export function firSimdSupported(): boolean {
  return firSimdHeap() !== null;
}

/** The shared heap, instantiating the module on first use; null when SIMD is unsupported. */
export function firSimdHeap(): FirSimdHeap | null {
  if (heap !== undefined) return heap;
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  const bytes = decodeBase64(FIR_SIMD_WASM_BASE64);
  if (wasm === undefined || !wasm.validate(bytes)) {
    heap = null;
    return heap;
  }
  // Synchronous compile is fine for a module this small (about 1 KB), once per process.
  const instance = new wasm.Instance(new wasm.Module(bytes), {});
  heap = new FirSimdHeap(instance.exports as FirSimdKernel);
  return heap;
}

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
