import type { StandInSize } from '@switchboard/testing';
import { pullWhisperStandIn } from '../../models/pull-stand-in.test-support';

/**
 * Installs `whisper-base.en` into `modelsDir` exactly as an operator does (`npm run models -- pull
 * whisper-base.en`, through the real command), with stand-in weights of the given size served by a
 * local Hub-like server: the server then loads it as a pulled model. The stand-in's compute is the
 * real model's at 'realistic' size, whatever its weights say.
 */
export function installWhisperStandIn(modelsDir: string, size: StandInSize): Promise<{ code: number; lines: string[] }> {
  return pullWhisperStandIn(modelsDir, size);
}
