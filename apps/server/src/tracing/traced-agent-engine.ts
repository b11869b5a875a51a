import type { AgentAudioOutput, AgentCallContext, AgentEngine, AgentSession } from '@switchboard/conversation';
import type { CallTracing } from './call-tracing';
import { TracingRecorder } from './tracing-recorder';

/**
 * An agent engine whose calls are traced: the call span opens with the session (the stream's
 * start) and ends with its close (whose reason is the call's end reason); the records the agent
 * writes drive the turn spans on the way to the call's own recorder.
 */
export function traceAgentEngine(engine: AgentEngine, tracing: CallTracing): AgentEngine {
  const traced: AgentEngine = {
    name: engine.name,
    audio: engine.audio,
    createSession(context: AgentCallContext, output: AgentAudioOutput): AgentSession {
      const trace = tracing.begin(context, engine.name);
      if (trace === undefined) return engine.createSession(context, output);
      // In place, not a copy: the edge updates the context it holds (answeredBy) while the call runs.
      context.recorder = new TracingRecorder(context.recorder, trace);
      let session: AgentSession;
      try {
        session = engine.createSession(context, output);
      } catch (error) {
        tracing.end(trace, 'agent_error');
        throw error;
      }
      return tracedSession(session, (reason) => tracing.end(trace, reason));
    },
  };
  if (engine.describeAudio) traced.describeAudio = (context) => engine.describeAudio!(context);
  return traced;
}

/** The session as it is, but for close(); optional methods stay absent where the agent has none (the edge checks). */
function tracedSession(session: AgentSession, ended: (reason: string) => void): AgentSession {
  const traced: AgentSession = {
    onDtmf: (digit) => session.onDtmf(digit),
    onMarkEchoed: (name, cleared) => session.onMarkEchoed(name, cleared),
    close: (reason) => {
      try {
        session.close(reason);
      } finally {
        ended(reason);
      }
    },
  };
  if (session.pushAudio) traced.pushAudio = (pcm) => session.pushAudio!(pcm);
  if (session.pushMulaw) traced.pushMulaw = (mulaw) => session.pushMulaw!(mulaw);
  if (session.onAnsweredBy) traced.onAnsweredBy = (answeredBy) => session.onAnsweredBy!(answeredBy);
  return traced;
}
