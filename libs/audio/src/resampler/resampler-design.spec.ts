import { measureBands } from './filter-design/frequency-response';
import { planStages, QUALITY_TARGETS } from './resampler-plan';

/**
 * Checks the design table in streaming-resampler.ts against the filters actually built: stage
 * layout, tap counts and the measured figures of every prototype (at its own band edges).
 */
const EXPECTED: ReadonlyArray<{ conversion: readonly [number, number]; stages: string[] }> = [
  { conversion: [16000, 8000], stages: ['1/2 remez 101'] },
  { conversion: [24000, 8000], stages: ['1/2 remez-half-band 31', '2/3 remez 151'] },
  { conversion: [22050, 8000], stages: ['320/441 kaiser 4349', '1/2 remez 101'] },
  { conversion: [8000, 16000], stages: ['2/1 remez-half-band 67'] },
  { conversion: [8000, 24000], stages: ['3/1 kaiser-nyquist 107'] },
];

describe('resampler filter designs (telephony quality)', () => {
  it.each(EXPECTED)('$conversion: stages as documented', ({ conversion, stages }) => {
    const plan = planStages(conversion[0], conversion[1], 'telephony');
    expect(plan.map((stage) => `${stage.upFactor}/${stage.downFactor} ${stage.filter.method} ${stage.filter.taps.length}`)).toEqual(stages);
  });

  it.each(EXPECTED)('$conversion: every prototype meets 83 dB / 0.025 dB at its band edges', ({ conversion }) => {
    const targets = QUALITY_TARGETS.telephony;
    for (const stage of planStages(conversion[0], conversion[1], 'telephony')) {
      const { spec, filter } = stage;
      const figures = measureBands(filter.taps, spec.dcGain, spec.passEdgeHz / spec.sampleRate, spec.stopEdgeHz / spec.sampleRate, 1500);
      expect(figures.stopbandAttenuationDb).toBeGreaterThanOrEqual(targets.stopbandAttenuationDb - 0.05);
      expect(figures.passbandRippleDb).toBeLessThanOrEqual(targets.passbandRippleDb);
    }
  });

  it('uses linear-phase (symmetric) prototypes of odd length, so delays fall on whole samples', () => {
    for (const { conversion } of EXPECTED) {
      for (const { filter } of planStages(conversion[0], conversion[1], 'telephony')) {
        const n = filter.taps.length;
        expect(n % 2).toBe(1);
        for (let k = 0; k < n >> 1; k++) expect(filter.taps[k]).toBe(filter.taps[n - 1 - k]);
      }
    }
  });

  it('designs once per conversion and quality (the plan is cached and shared)', () => {
    expect(planStages(16000, 8000, 'telephony')).toBe(planStages(16000, 8000, 'telephony'));
    expect(planStages(16000, 8000, 'high')).not.toBe(planStages(16000, 8000, 'telephony'));
  });
});
