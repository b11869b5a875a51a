import type { CapabilityObserver } from '../contracts/capability-observer';
import type { SpeechToSpeechEngine, SpeechToSpeechSession } from './speech-to-speech-engine';

/**
 * The speech-to-speech engine whose sessions are reported to `observer`: connecting, then each
 * response (its tokens and timings) and each error the session reports. The engine's own session
 * is returned, so the caller's listeners attach to it.
 */
export function observedSpeechToSpeech(engine: SpeechToSpeechEngine, observer: CapabilityObserver): SpeechToSpeechEngine {
  return {
    name: engine.name,
    inputFormat: engine.inputFormat,
    outputFormat: engine.outputFormat,
    connect: async (options): Promise<SpeechToSpeechSession> => {
      const report = observer.speechToSpeech({ callId: options.callId, engineName: engine.name });
      let session: SpeechToSpeechSession;
      try {
        session = await engine.connect(options);
      } catch (error) {
        report.failed(error);
        throw error;
      }
      report.connected(session);
      // Attached before this resolves: only microtasks separate it from the caller's own listeners.
      session.on('error', (error) => report.sessionError(error));
      session.on('response_done', (event) => report.responseDone(event));
      return session;
    },
  };
}
