/**
 * `npm run build:wasm`: compiles libs/audio's WebAssembly text sources into the committed
 * TypeScript modules that carry their bytes (so the runtime needs no wabt and no file access).
 * Today that is the resampler's SIMD FIR kernel, kernels/fir-simd.wat -> fir-simd.wasm.ts.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
// `npm run build:wasm` runs under plain ts-node (no path aliases) and generates the kernel module the
// audio lib's entry point loads, so it reaches the builder by path.
// eslint-disable-next-line no-restricted-imports
import { compileFirSimd, FIR_SIMD_MODULE_PATH, renderFirSimdModule } from '../../../libs/audio/src/resampler/kernels/fir-simd-build';

async function main(): Promise<void> {
  const bytes = await compileFirSimd();
  writeFileSync(FIR_SIMD_MODULE_PATH, renderFirSimdModule(bytes));
  console.log(`wrote ${relative(process.cwd(), FIR_SIMD_MODULE_PATH)} (${bytes.length} bytes of wasm)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
