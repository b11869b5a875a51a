import type { CapabilityObserver } from '../contracts/capability-observer';
import type { AsrEngine, AsrSession } from './asr-engine';

/**
 * The ASR engine whose every transcription is reported to `observer`: the report starts when the
 * final transcript is asked for (for remote engines, that is when the request is made) and hears
 * the result or the failure. Audio, partials and the result pass through untouched.
 */
export function observedAsr(engine: AsrEngine, observer: CapabilityObserver): AsrEngine {
  return {
    name: engine.name,
    sampleRate: engine.sampleRate,
    supportsPartials: engine.supportsPartials,
    createSession(options): AsrSession {
      const session = engine.createSession(options);
      return {
        pushAudio: (pcm16k) => session.pushAudio(pcm16k),
        onPartial: (listener) => session.onPartial(listener),
        finish: async () => {
          const report = observer.transcription({ callId: options.callId, engineName: engine.name });
          try {
            const result = await session.finish();
            report.transcribed(result);
            return result;
          } catch (error) {
            report.failed(error);
            throw error;
          }
        },
        cancel: () => session.cancel(),
      };
    },
  };
}
