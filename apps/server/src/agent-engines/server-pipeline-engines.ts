import { type EngineCallContext, type PipelineEngineResolver, type PipelineEngines } from '@switchboard/conversation';
import { type AgentConfig, OPENAI_DEFAULT_BASE_URL } from '@switchboard/agent-config';
import {
  type AsrEngine,
  EspeakProcessPhonemizer,
  FliteTts,
  type InferenceRuntime,
  KokoroTts,
  type LlmEngine,
  LocalOnnxLlm,
  LocalWhisperAsr,
  modelFolder,
  type ModelRegistry,
  observedAsr,
  observedLlm,
  observedTts,
  OpenAiChatLlm,
  OpenAiSpeechTts,
  OpenAiTranscriptionAsr,
  PiperTts,
  SileroVad,
  SmartTurnClassifier,
  type TtsEngine,
  type VadStream,
} from '@switchboard/inference';
import type { TenantOutbound } from '../outbound/outbound-guard.provider';
import { EngineCache } from './remote-engine-settings';
import { EngineConfigError, type EngineCredentials, type EngineKey } from './engine-credentials';
import type { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';
import type { EngineObserver } from '../tracing/engine-observer';
import { llmTarget, sttTarget, ttsTarget } from '../tracing/engine-targets';
import { CallEngineObserver } from './call-engine-observer';

/** Output rates by TTS provider (Piper's medium/high voices speak at 22.05 kHz; OpenAI's `pcm` is 24 kHz). */
const TTS_SAMPLE_RATES: Record<AgentConfig['tts']['provider'], number> = { flite: 16_000, openai: 24_000, kokoro: 24_000, piper: 22_050 };

/**
 * Builds a pipeline call's engines from its agent config: remote engines for OpenAI-compatible
 * servers, local ones through the shared inference runtime (models from MODELS_DIR), Flite built
 * in. Engines are shared by every call with the same settings and key. Remote engines reach their
 * servers only through the outbound guard, with the key of the call's organization (or the
 * operator's, for the provider's own endpoint).
 */
export class ServerPipelineEngines implements PipelineEngineResolver {
  private vad: Promise<SileroVad> | undefined;
  private readonly asr = new EngineCache<AsrEngine>();
  private readonly llm = new EngineCache<LlmEngine>();
  private readonly tts = new EngineCache<TtsEngine>();
  private endOfTurn: Promise<SmartTurnClassifier> | undefined;

  constructor(
    private readonly runtime: () => Promise<InferenceRuntime>,
    private readonly models: ModelRegistry,
    private readonly modelsDir: string,
    private readonly usage: CallUsageRegistry,
    private readonly credentials: EngineCredentials,
    private readonly outbound: TenantOutbound,
    /** Counts every failed request by provider and step, and traces it when its call is traced. */
    private readonly observer: EngineObserver,
  ) {}

  ttsSampleRate(config: AgentConfig): number {
    return TTS_SAMPLE_RATES[config.tts.provider];
  }

  async resolve(config: AgentConfig, call: EngineCallContext): Promise<PipelineEngines> {
    const { callId, organizationId } = call;
    const [vad, asr, llm, tts, endOfTurnClassifier] = await Promise.all([
      this.sileroVad(),
      this.asrFor(config.stt, config.language, organizationId),
      this.llmFor(config.llm, organizationId),
      this.ttsFor(config.tts, organizationId),
      config.turn.endOfTurnModel ? this.endOfTurnModel() : Promise.resolve(undefined),
    ]);
    // Engines are shared by calls; the call's one observer hears each request's usage and timings
    // and feeds both its meter and its spans and failure counts.
    const observer = new CallEngineObserver({ stt: sttTarget(config.stt), llm: llmTarget(config.llm), tts: ttsTarget(config.tts) }, this.observer, this.usage);
    return {
      vad: vad.createStream(callId),
      asr: observedAsr(asr, observer),
      llm: observedLlm(llm, observer),
      tts: observedTts(tts, observer),
      endOfTurnClassifier,
    };
  }

  /**
   * The LLM a post-call analysis uses (the agent's `llm`, or the analysis's own), shared like the
   * call's engines; not metered per call: the analysis counts its own tokens.
   */
  async analysisLlm(llm: AgentConfig['llm'], organizationId: string): Promise<LlmEngine> {
    return observedLlm(await this.llmFor(llm, organizationId), new CallEngineObserver({ llm: llmTarget(llm) }, this.observer));
  }

  /** A VAD stream for one call on the shared Silero model (the realtime agent judges barge-in with it). */
  async createVadStream(callId: string): Promise<VadStream> {
    return (await this.sileroVad()).createStream(callId);
  }

  /** Ends the engines that hold threads (Flite workers). */
  async close(): Promise<void> {
    for (const tts of await this.tts.values()) if (tts instanceof FliteTts) await tts.close();
  }

  private async asrFor(stt: AgentConfig['stt'], language: string, organizationId: string): Promise<AsrEngine> {
    if (stt.provider === 'local') {
      return this.asr.get(['local', stt.model], async () => LocalWhisperAsr.load({ runtime: await this.runtime(), modelDir: this.installedFolder(stt.model), defaultLanguage: language }));
    }
    const { baseUrl, key } = await this.remoteEndpoint('stt', stt, organizationId);
    return this.asr.get(['openai', baseUrl, stt.model, key.cacheKey], () => new OpenAiTranscriptionAsr({ baseUrl, model: stt.model, apiKey: key.apiKey, fetch: this.outbound.request }));
  }

  private async llmFor(llm: AgentConfig['llm'], organizationId: string): Promise<LlmEngine> {
    if (llm.provider === 'local') {
      return this.llm.get(['local', llm.model], async () => LocalOnnxLlm.load({ runtime: await this.runtime(), modelDir: this.installedFolder(llm.model) }));
    }
    const { baseUrl, key } = await this.remoteEndpoint('llm', llm, organizationId);
    return this.llm.get(['openai', baseUrl, llm.model, key.cacheKey], () => new OpenAiChatLlm({ baseUrl, model: llm.model, apiKey: key.apiKey, fetch: this.outbound.request }));
  }

  private async ttsFor(tts: AgentConfig['tts'], organizationId: string): Promise<TtsEngine> {
    switch (tts.provider) {
      case 'flite':
        // One worker pool for every Flite voice: the voice is chosen per sentence.
        return this.tts.get(['flite'], () => new FliteTts());
      case 'openai': {
        const { baseUrl, key } = await this.remoteEndpoint('tts', tts, organizationId);
        return this.tts.get(['openai', baseUrl, tts.model, key.cacheKey], () =>
          new OpenAiSpeechTts({ baseUrl, model: tts.model ?? 'gpt-4o-mini-tts', apiKey: key.apiKey, voice: tts.voice, fetch: this.outbound.request }),
        );
      }
      case 'kokoro':
        return this.tts.get(['kokoro', tts.model], async () =>
          KokoroTts.load({ runtime: await this.runtime(), modelDir: this.installedFolder(tts.model ?? 'kokoro-82m-v1.0'), phonemizer: new EspeakProcessPhonemizer(), defaultVoice: tts.voice }),
        );
      case 'piper':
        return this.tts.get(['piper', tts.model], async () =>
          PiperTts.load({ runtime: await this.runtime(), modelPath: this.installedFile(tts.model ?? 'piper-en_US-lessac-medium', (path) => path.endsWith('.onnx')), phonemizer: new EspeakProcessPhonemizer() }),
        );
    }
  }

  /**
   * A remote engine's endpoint and key for a call of `organizationId`. A URL the outbound rule refuses
   * (a config stored before the rule) fails here, before any request, with the reason.
   */
  private async remoteEndpoint(
    path: 'stt' | 'llm' | 'tts',
    settings: { baseUrl?: string; apiKeySecret?: string; apiKeyEnv?: string },
    organizationId: string,
  ): Promise<{ baseUrl: string; key: EngineKey }> {
    const baseUrl = settings.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
    const check = this.outbound.guard.checkUrl(baseUrl, 'http');
    if (!check.ok) throw new EngineConfigError(`${path}.baseUrl refused: ${check.reason}`);
    return { baseUrl, key: await this.credentials.keyFor(organizationId, settings, settings.baseUrl) };
  }

  /**
   * A file of an installed model; throws the registry's 'model_missing' error, which names the
   * `npm run models -- pull` command, when it is not installed.
   */
  private installedFile(name: string, pick: (path: string) => boolean = () => true): string {
    const file = this.models.catalogEntry(name)?.files.find((candidate) => pick(candidate.path));
    if (!file) throw new Error(`unknown model "${name}": see \`npm run models -- list\``);
    return this.models.resolvePath(name, file.path);
  }

  private installedFolder(name: string): string {
    this.installedFile(name);
    return modelFolder(this.modelsDir, name);
  }

  /** Loaded once, on first use; a failed load is tried again by the next call. */
  private sileroVad(): Promise<SileroVad> {
    this.vad ??= this.runtime().then((runtime) => SileroVad.load(runtime));
    this.vad.catch(() => (this.vad = undefined));
    return this.vad;
  }

  private endOfTurnModel(): Promise<SmartTurnClassifier> {
    this.endOfTurn ??= this.runtime().then((runtime) => SmartTurnClassifier.load({ runtime, modelPath: this.installedFile('smart-turn-v3.2', (path) => path.endsWith('.onnx')) }));
    this.endOfTurn.catch(() => (this.endOfTurn = undefined));
    return this.endOfTurn;
  }
}
