export { SileroVad, SILERO_MODEL_NAME, defaultSileroModelPath, type SileroVadOptions } from './silero-vad';
export { SileroVadStream } from './silero-vad-stream';
export type { VadFrame, VadListener, VadStream } from './vad-frame';
export { pushAndCollect, VadListeners } from './vad-listeners';
