/** Twilio Media Streams carry 8 kHz mono G.711 mu-law. */
export const SAMPLE_RATE_TWILIO = 8000;
/** Twilio sends (and we send back) 20 ms media frames: 160 mu-law bytes at 8 kHz. */
export const FRAME_MS = 20;
