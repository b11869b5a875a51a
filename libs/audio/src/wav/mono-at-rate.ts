import { StreamingResampler } from '../resampler/streaming-resampler';

/** Averages interleaved channels into one. */
export function downmixToMono(interleaved: Int16Array, channels: number): Int16Array {
  if (channels === 1) return interleaved;
  const frames = Math.floor(interleaved.length / channels);
  const mono = new Int16Array(frames);
  for (let frame = 0; frame < frames; frame += 1) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel += 1) sum += interleaved[frame * channels + channel] ?? 0;
    mono[frame] = Math.round(sum / channels);
  }
  return mono;
}

/**
 * Resamples a whole recording (not a stream): the filter's tail is flushed and its group delay
 * dropped, so the output starts when the input does and is as long as it should be.
 */
export function resampleWhole(samples: Int16Array, inputRate: number, outputRate: number): Int16Array {
  if (inputRate === outputRate) return samples;
  const resampler = new StreamingResampler({ inputRate, outputRate });
  // process() returns a view into the resampler's own buffer: copy before the next call.
  const body = resampler.process(samples).slice();
  const tail = resampler.flush();
  const out = new Int16Array(body.length + tail.length);
  out.set(body);
  out.set(tail, body.length);
  return out.subarray(Math.min(resampler.delayOutputSamples, out.length));
}

/** A WAV's audio as one channel at `rate` (what a caller or a model is fed). */
export function monoAtRate(wav: { samples: Int16Array; sampleRate: number; channelCount: number }, rate: number): Int16Array {
  return resampleWhole(downmixToMono(wav.samples, wav.channelCount), wav.sampleRate, rate);
}
