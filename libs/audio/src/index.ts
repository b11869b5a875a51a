/**
 * @switchboard/audio: telephony audio primitives in plain TypeScript (no framework):
 * G.711 codecs, a streaming resampler, frame chunking, WAV I/O and level/SNR measurement.
 */
export { SAMPLE_RATE_TWILIO, FRAME_MS } from './audio-constants';
export { AudioError, type AudioErrorCode } from './audio-error';
export { decodeMulaw, encodeMulaw, decodeMulawSample, encodeMulawSample, MULAW_SILENCE } from './codec/mulaw';
export { decodeAlaw, encodeAlaw, decodeAlawSample, encodeAlawSample, ALAW_SILENCE } from './codec/alaw';
export { StreamingResampler, type ResamplerOptions, type ResamplerQuality, type ResamplerKernel } from './resampler/streaming-resampler';
export { QUALITY_TARGETS, type QualityTargets } from './resampler/resampler-plan';
export { FrameChunker, type FrameChunkerOptions, type FlushMode, type FrameArray } from './frames/frame-chunker';
export { concatFloat32, concatPcm16 } from './frames/concat-samples';
export { readWav, wavHeader, writeWav, WAV_HEADER_BYTES, type WavAudio, type WavWriteInput, type WavSourceEncoding } from './wav/wav';
export { downmixToMono, monoAtRate, resampleWhole } from './wav/mono-at-rate';
export { sineTone, type SineToneOptions } from './analysis/tone';
export { rmsDbfs, toneLevelDbfs, snrDb, bestLagSnr, type BestLagOptions, type BestLagResult } from './analysis/signal-metrics';
