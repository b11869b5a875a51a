export { FliteTts, type FliteTtsOptions } from './flite-tts';
export { FLITE_VOICES, FLITE_SAMPLE_RATE, type FliteVoice } from './flite-voices';
