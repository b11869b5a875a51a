export { SileroVad, SILERO_MODEL_NAME, defaultSileroModelPath, type SileroVadOptions } from './silero-vad';
export { SileroVadStream } from './silero-vad-stream';
export type { VadFrame, VadStream } from './vad-frame';
