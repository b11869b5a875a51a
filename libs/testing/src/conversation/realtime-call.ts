/**
 * One realtime call on scripted parts, for the RealtimeAgentSession specs: the model is a scripted
 * speech-to-speech session the test plays, the caller's audio goes through a loudness VAD (Silero's
 * 32 ms framing) into the real interruption logic, and the call's playback buffer is a fake output
 * whose marks the test echoes. Time is Jest's fake clock: 20 ms of caller audio per 20 ms.
 */
import { encodeMulaw } from '@switchboard/audio';
import type { VadStream } from '@switchboard/inference';
import type { AgentConfigInput } from '@switchboard/agent-config';
import { parseAgentConfig } from '@switchboard/agent-config';
import { callerFrame, FakeAudioOutput, FakeCallControl, gate, ScriptedVad, settle, useCallPerTest, scriptedCallContext } from './pipeline-fakes';
import { InMemoryConversationRecorder } from '../../../conversation/src/records/conversation-records';
import type { ToolInvocation, ToolOutcome, ToolRunner } from '../../../conversation/src/tools/tool-contracts';
import { succeeded } from '../../../conversation/src/tools/tool-outcome';
import { RealtimeAgentSession } from '../../../conversation/src/realtime/realtime-agent-session';
import { ScriptedSpeechEngine, type ScriptedSpeechSession } from './realtime-fakes';
export const FILLER = 'One moment while I look that up.';

/** One webhook-like tool with a filler line, answering when the test opens its gate. */
export class SlowLookupTool implements ToolRunner {
  readonly definitions = [{ name: 'lookup_order', description: 'Finds an order', parameters: { type: 'object', properties: {} } }];
  readonly runs: ToolInvocation[] = [];
  private readonly answer = gate();

  fillerFor(name: string): string | undefined {
    return name === 'lookup_order' ? FILLER : undefined;
  }

  async run(call: ToolInvocation): Promise<ToolOutcome> {
    this.runs.push(call);
    await this.answer.opened;
    return succeeded({ status: 'shipped' });
  }

  finish(): void {
    this.answer.open();
  }
}

/** A VAD whose every push fails (the inference runtime went away mid-call). */
export class FailingVad extends ScriptedVad {
  override failure = new Error('inference runtime closed');
}

export interface CallOptions {
  config?: AgentConfigInput;
  /** The model's engine; defaults to one that connects at once. */
  engine?: Promise<ScriptedSpeechEngine>;
  /** The call's VAD; a rejection stands for a VAD that could not be loaded. */
  vad?: () => Promise<VadStream>;
  tools?: ToolRunner;
}

export class CallUnderTest {
  readonly engine = new ScriptedSpeechEngine();
  readonly output = new FakeAudioOutput();
  readonly recorder = new InMemoryConversationRecorder();
  readonly callControl = new FakeCallControl();
  readonly endReasons: string[] = [];
  readonly vad = new ScriptedVad('call-1');
  vadRequests = 0;
  readonly session: RealtimeAgentSession;

  constructor(options: CallOptions = {}) {
    const config = parseAgentConfig({ firstMessage: null, ...options.config });
    const context = scriptedCallContext(config, this);
    const tools: ToolRunner = options.tools ?? { definitions: [], fillerFor: () => undefined, run: async () => succeeded(null) };
    this.session = new RealtimeAgentSession(context, config, this.output, {
      tools,
      engine: options.engine ?? Promise.resolve(this.engine),
      createVad: () => {
        this.vadRequests += 1;
        return options.vad ? options.vad() : Promise.resolve(this.vad);
      },
    });
    this.output.connect((name, cleared) => this.session.onMarkEchoed(name, cleared));
  }

  get model(): ScriptedSpeechSession {
    const session = this.engine.sessions[0];
    if (!session) throw new Error('the session never connected to the model');
    return session;
  }

  /** The caller talks (loud audio) or is silent for `ms`, in 20 ms frames that arrive in real time. */
  async audio(loud: boolean, ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 20) {
      await jest.advanceTimersByTimeAsync(20);
      // What the edge hands a mu-law agent: the caller's bytes as they came.
      this.session.pushMulaw(encodeMulaw(callerFrame(loud)));
      await settle();
    }
  }

  talk(ms: number): Promise<void> {
    return this.audio(true, ms);
  }

  pause(ms: number): Promise<void> {
    return this.audio(false, ms);
  }

  async wait(ms: number): Promise<void> {
    await jest.advanceTimersByTimeAsync(ms);
    await settle();
  }

  /** The model answers with `chunks` × 100 ms of audio (still generating: no response_done yet). */
  async modelSpeaks(responseId: string, chunks: number, text = 'We open at nine and close at five.'): Promise<void> {
    this.model.speak(responseId, `${responseId}-item`, chunks);
    this.model.transcript(`${responseId}-item`, text);
    await settle();
  }

  eventsOf(type: string): Record<string, unknown>[] {
    return this.recorder.events.filter((event) => event.type === type).map((event) => event.payload);
  }
}

/** Runs each test on Jest's fake clock with a call of its own (useCallPerTest). */
export function useRealtimeCalls(): (options?: CallOptions) => Promise<CallUnderTest> {
  return useCallPerTest((options?: CallOptions) => new CallUnderTest(options));
}
