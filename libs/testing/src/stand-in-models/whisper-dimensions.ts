/** Sizes of a stand-in model: 'small' keeps unit tests fast, 'realistic' matches the real model's compute. */
export type StandInSize = 'small' | 'realistic';

export interface WhisperDimensions {
  dModel: number;
  heads: number;
  encoderLayers: number;
  decoderLayers: number;
  ffnDim: number;
  melBins: number;
  /** Encoder frames after the stride-2 convolution (30 s of audio). */
  sourcePositions: number;
  targetPositions: number;
  merges: number;
  regularTokens?: number;
  languages: number;
  timestampTokens: number;
  /** Decoder position after which the stand-in's end-of-text logit starts to climb. */
  endOfTextAfterPosition: number;
}

const COMMON = { melBins: 80, sourcePositions: 1500, targetPositions: 448 } as const;

/** 'realistic' is whisper-base (74 M parameters, multilingual vocabulary of 51865). */
export const WHISPER_DIMENSIONS: Record<StandInSize, WhisperDimensions> = {
  small: {
    ...COMMON,
    dModel: 64,
    heads: 2,
    encoderLayers: 1,
    decoderLayers: 2,
    ffnDim: 128,
    merges: 160,
    languages: 4,
    timestampTokens: 11,
    endOfTextAfterPosition: 10,
  },
  realistic: {
    ...COMMON,
    dModel: 512,
    heads: 8,
    encoderLayers: 6,
    decoderLayers: 6,
    ffnDim: 2048,
    merges: 160,
    regularTokens: 50257,
    languages: 99,
    timestampTokens: 1501,
    endOfTextAfterPosition: 18,
  },
};
