/**
 * One call to a pipeline agent on scripted engines, for the PipelineAgentSession specs: caller
 * audio goes through a loudness VAD and the real turn detector, transcripts come from a scripted
 * recogniser, the model's tokens from a scripted LLM, audio from a fake TTS through the real
 * QueuedTtsStream, and the call's playback buffer is a fake output whose marks the test echoes.
 * Time is Jest's fake clock: 20 ms of caller audio per 20 ms.
 */
import type { ChatMessage, ToolDefinition } from '@switchboard/inference';
import type { AgentConfigInput } from '@switchboard/agent-config';
import { parseAgentConfig } from '@switchboard/agent-config';
import { InMemoryConversationRecorder } from '../../../conversation/src/records/conversation-records';
import type { ToolCallContext, ToolInvocation, ToolOutcome, ToolRunner } from '../../../conversation/src/tools/tool-contracts';
import { failed } from '../../../conversation/src/tools/tool-outcome';
import { PipelineAgentSession } from '../../../conversation/src/pipeline/pipeline-agent-session';
import { callerFrame, FakeAudioOutput, FakeCallControl, FakeTts, ScriptedAsr, ScriptedLlm, ScriptedVad, settle, useCallPerTest, scriptedCallContext } from './pipeline-fakes';

const SYSTEM_PROMPT = 'You answer calls for Acme. The caller is {{caller.number}}.';
const RENDERED_SYSTEM_PROMPT = 'You answer calls for Acme. The caller is +15550001111.';
export const DEFAULTS = parseAgentConfig({});

/** Tools by name with the outcome each returns; records every run. */
export class FakeToolRunner implements ToolRunner {
  readonly definitions: ToolDefinition[];
  readonly runs: { call: ToolInvocation; context: ToolCallContext }[] = [];
  /** When set, every run answers only once this settles (a slow business endpoint that ignores the abort). */
  slowUntil: Promise<void> | undefined;

  constructor(private readonly outcomes: Record<string, ToolOutcome> = {}) {
    this.definitions = Object.keys(outcomes).map((name) => ({ name, description: `The ${name} tool`, parameters: { type: 'object', properties: {} } }));
  }

  fillerFor(): string | undefined {
    return undefined;
  }

  async run(call: ToolInvocation, context: ToolCallContext): Promise<ToolOutcome> {
    this.runs.push({ call, context });
    await this.slowUntil;
    return this.outcomes[call.name] ?? failed(`unknown tool ${call.name}`);
  }
}

export interface CallOptions {
  config?: AgentConfigInput;
  /** Settles when the engines are ready (default: at once). */
  enginesReady?: Promise<void>;
  supportsPartials?: boolean;
  tools?: FakeToolRunner;
}

/** One call to a pipeline agent, with every fake it runs on. */
export class CallUnderTest {
  readonly vad = new ScriptedVad('call-1');
  readonly asr: ScriptedAsr;
  readonly llm = new ScriptedLlm();
  readonly tts = new FakeTts();
  readonly output = new FakeAudioOutput();
  readonly recorder = new InMemoryConversationRecorder();
  readonly callControl = new FakeCallControl();
  readonly tools: FakeToolRunner;
  readonly endReasons: string[] = [];
  readonly session: PipelineAgentSession;

  constructor(options: CallOptions = {}) {
    this.asr = new ScriptedAsr(options.supportsPartials ?? false);
    this.tools = options.tools ?? new FakeToolRunner();
    const config = parseAgentConfig({ systemPrompt: SYSTEM_PROMPT, ...options.config });
    const context = scriptedCallContext(config, this);
    const engines = (options.enginesReady ?? Promise.resolve()).then(() => ({ vad: this.vad, asr: this.asr, llm: this.llm, tts: this.tts }));
    this.session = new PipelineAgentSession(context, config, this.output, this.tools, engines);
    this.output.connect((name, cleared) => this.session.onMarkEchoed(name, cleared));
  }

  /**
   * Set: frames come in one buffer that is zeroed right after each push, as the call edge reuses
   * its decode buffer; anything that kept a reference instead of a copy would then hold silence.
   */
  reuseFrameBuffer = false;
  private readonly reusedFrame = new Int16Array(160);

  /** The caller talks (loud audio) or is silent for `ms`, in 20 ms frames that arrive in real time. */
  async audio(loud: boolean, ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 20) {
      await jest.advanceTimersByTimeAsync(20);
      if (this.reuseFrameBuffer) {
        this.reusedFrame.set(callerFrame(loud));
        this.session.pushAudio(this.reusedFrame);
        this.reusedFrame.fill(0);
      } else {
        this.session.pushAudio(callerFrame(loud));
      }
      await settle();
    }
  }

  talk(ms: number): Promise<void> {
    return this.audio(true, ms);
  }

  pause(ms: number): Promise<void> {
    return this.audio(false, ms);
  }

  /** A whole caller turn: 600 ms of speech, then the 500 ms pause that ends it (and a little more). */
  async callerSays(text: string | Error): Promise<void> {
    this.asr.willHear(text);
    await this.talk(600);
    await this.pause(700);
  }

  async pressKeys(...digits: string[]): Promise<void> {
    for (const digit of digits) this.session.onDtmf(digit);
    await settle();
  }

  /** The call played everything queued so far. */
  async echoAll(): Promise<void> {
    this.output.echoPlayed();
    await settle();
  }

  async wait(ms: number): Promise<void> {
    await jest.advanceTimersByTimeAsync(ms);
    await settle();
  }

  eventsOf(type: string): Record<string, unknown>[] {
    return this.recorder.events.filter((event) => event.type === type).map((event) => event.payload);
  }

  get turns(): { role: string; source: string; text: string; heardText: string | null; interrupted: boolean }[] {
    return this.recorder.turns.map(({ role, source, text, heardText, interrupted }) => ({ role, source, text, heardText, interrupted }));
  }

  messagesOf(request: number): ChatMessage[] {
    const sent = this.llm.requests[request];
    if (!sent) throw new Error(`no LLM request ${request} (made ${this.llm.requests.length})`);
    return sent.messages;
  }
}

export const system: ChatMessage = { role: 'system', content: RENDERED_SYSTEM_PROMPT };
export const user = (content: string): ChatMessage => ({ role: 'user', content });
export const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/** Runs each test on Jest's fake clock with a call of its own (useCallPerTest). */
export function usePipelineCalls(): (options?: CallOptions) => Promise<CallUnderTest> {
  return useCallPerTest((options?: CallOptions) => new CallUnderTest(options));
}
