/**
 * @echogarden/speex-resampler-wasm ships no type declarations, and its SIMD build is reachable
 * only through its package "exports" map, which this repo's `moduleResolution: node` does not
 * read (Node itself resolves it fine at run time). The bench types the module it uses itself.
 */
declare module '@echogarden/speex-resampler-wasm/simd' {
  const createSpeexModule: () => Promise<unknown>;
  export default createSpeexModule;
}
