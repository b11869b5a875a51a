import { bestLagSnr } from '../analysis/signal-metrics';
import { sineTone } from '../analysis/tone';
import { decodeMulaw, encodeMulaw } from '../codec/mulaw';
import { StreamingResampler } from './streaming-resampler';
import { KERNELS, resampleInChunks } from '@switchboard/testing';

/**
 * The chain the end-to-end echo test runs, in miniature: a caller's tone arrives as mu-law at
 * 8 kHz, is decoded, upsampled to the model's 16 kHz, echoed back, downsampled to 8 kHz and
 * mu-law encoded again, all in 20 ms frames. It must come back with SNR >= 30 dB against the
 * decoded original, measured at the best integer lag with no gain correction (a level error
 * counts as noise). The lag must be the sum of the two resamplers' reported delays.
 */
describe.each(KERNELS)('8 kHz mu-law -> 16 kHz -> 8 kHz mu-law round trip (%s kernel)', (kernel) => {
  it.each([300, 1000, 2000, 3000, 3300])('%i Hz comes back with SNR >= 30 dB, delayed by exactly the reported delay', (frequencyHz) => {
    const original = encodeMulaw(sineTone({ frequencyHz, sampleRate: 8000, durationMs: 1000, amplitudeDbfs: -6 }));
    const reference = decodeMulaw(original);

    const up = new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel });
    const down = new StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel });
    const wideband = resampleInChunks(up, reference, [160]);
    const narrowband = resampleInChunks(down, wideband, [320]);
    const received = decodeMulaw(encodeMulaw(narrowband));

    const trim = 400; // 50 ms of start-up and tail, where the filters are filling or draining
    const expectedLag = up.delayOutputSamples / 2 + down.delayOutputSamples;
    const result = bestLagSnr(reference.subarray(trim, reference.length - trim), received, {
      minLagSamples: trim + expectedLag - 8,
      maxLagSamples: trim + expectedLag + 8,
    });
    expect(result.snrDb).toBeGreaterThanOrEqual(30);
    // A tone repeats every period, so only check the lag modulo the period: it is the delay.
    const period = 8000 / frequencyHz;
    const offset = (result.lagSamples - trim - expectedLag) / period;
    expect(Math.abs(offset - Math.round(offset))).toBeLessThan(1e-9);
  });

  it('reports whole-sample delays on both legs, so the round trip needs no interpolation', () => {
    const up = new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel });
    const down = new StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel });
    expect(Number.isInteger(up.delayInputSamples)).toBe(true);
    expect(Number.isInteger(down.delayOutputSamples)).toBe(true);
    expect(up.delayMs + down.delayMs).toBeLessThan(10);
  });
});
