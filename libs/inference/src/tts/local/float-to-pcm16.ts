/** Model output (float, nominally -1..1) -> 16-bit PCM, clipping anything outside full scale. */
export function floatToPcm16(samples: Float32Array): Int16Array {
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const value = samples[i] as number;
    // NaN (a broken model) becomes silence rather than a full-scale click.
    pcm[i] = value !== value ? 0 : Math.round(Math.max(-1, Math.min(1, value)) * 32767);
  }
  return pcm;
}
