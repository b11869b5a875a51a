/** Magnitude of an FIR filter's frequency response at `frequency` (cycles per sample). */
export function magnitudeResponse(taps: ArrayLike<number>, frequency: number): number {
  // e^{-iwn} by rotation rather than cos/sin per tap (Math.* calls are slow under Jest's VM
  // context); the rounding drift over a few thousand taps stays far below the -100 dB we read.
  const w = 2 * Math.PI * frequency;
  const stepRe = Math.cos(w);
  const stepIm = -Math.sin(w);
  let rotRe = 1;
  let rotIm = 0;
  let re = 0;
  let im = 0;
  for (let n = 0; n < taps.length; n++) {
    re += taps[n]! * rotRe;
    im += taps[n]! * rotIm;
    const nextRe = rotRe * stepRe - rotIm * stepIm;
    rotIm = rotRe * stepIm + rotIm * stepRe;
    rotRe = nextRe;
  }
  return Math.sqrt(re * re + im * im);
}

export interface BandFigures {
  /** Largest deviation from `gain` in the pass band, in dB (positive number). */
  readonly passbandRippleDb: number;
  /** Smallest attenuation in the stop band relative to `gain`, in dB (positive number). */
  readonly stopbandAttenuationDb: number;
}

/**
 * Scans a designed filter on a fine grid: the numbers printed in the design table of
 * streaming-resampler.ts come from here (the sine-sweep tests then confirm them end to end).
 */
export function measureBands(taps: ArrayLike<number>, gain: number, passEdge: number, stopEdge: number, points = 2000): BandFigures {
  let lowest = Infinity;
  let highest = 0;
  for (let i = 0; i <= points; i++) {
    const m = magnitudeResponse(taps, (passEdge * i) / points) / gain;
    if (m < lowest) lowest = m;
    if (m > highest) highest = m;
  }
  let worst = 0;
  for (let i = 0; i <= points; i++) {
    const m = magnitudeResponse(taps, stopEdge + ((0.5 - stopEdge) * i) / points) / gain;
    if (m > worst) worst = m;
  }
  const rippleDb = Math.max(20 * Math.log10(highest), -20 * Math.log10(lowest));
  return { passbandRippleDb: rippleDb, stopbandAttenuationDb: -20 * Math.log10(worst) };
}
