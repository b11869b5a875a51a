/**
 * The agent every bench call talks to: the real PipelineAgentEngine with the real Silero VAD
 * (one inference runtime and one model for all calls, a stream per call, as the server runs it)
 * and fake ASR/LLM/TTS engines with scripted delays.
 */
import { createToolRunner, PipelineAgentEngine, type PipelineEngineResolver } from '@switchboard/conversation';
import { parseAgentConfig } from '@switchboard/agent-config';
import { createInferenceRuntime, type OnnxInferenceRuntime, SileroVad } from '@switchboard/inference';
import { EngineDelayLog } from './engine-delay-log';
import { FakeAsrEngine } from './fake-asr-engine';
import { FakeLlmEngine } from './fake-llm-engine';
import { FakeTtsEngine } from './fake-tts-engine';
import { VadTimings } from './vad-timings';
import {
  BENCH_AGENT_CONFIG,
  ENGINE_DELAYS,
  INTERRUPTION_MIN_SPEECH_MS,
  LLM_DELTA_INTERVAL_MS,
  TTS_AUDIO_MS,
  TTS_BURST_INTERVAL_MS,
  TTS_CHUNK_MS,
  TTS_CHUNKS_PER_BURST,
  TTS_SAMPLE_RATE,
  TURN_MIN_SILENCE_MS,
} from './latency-bench-settings';

export interface BenchPipeline {
  engine: PipelineAgentEngine;
  delays: EngineDelayLog;
  runtime: OnnxInferenceRuntime;
  vadTimings: VadTimings;
  /** Inference worker threads, when set; otherwise the server's default (min(2, cores)). */
  workers: number | undefined;
  /** The runtime's batch gathering window, when set; otherwise the server's default (2 ms). */
  batchMaxDelayMs: number | undefined;
  close(): Promise<void>;
}

export async function startBenchPipeline(options: { workers?: number; batchMaxDelayMs?: number } = {}): Promise<BenchPipeline> {
  assertConfigDefaults();
  const quiet = { log: (): void => undefined, warn: (): void => undefined };
  const vadTimings = new VadTimings();
  // The server's runtime settings (INFERENCE_* unset): default workers and batching delay, on the CPU.
  const runtime = await createInferenceRuntime({
    device: 'cpu',
    workers: options.workers,
    batchMaxDelayMs: options.batchMaxDelayMs,
    logger: quiet,
    onBatch: vadTimings.onBatch,
  });
  try {
    const vad = await SileroVad.load(runtime);
    await warmUp(vad);
    const delays = new EngineDelayLog();
    const asr = new FakeAsrEngine(ENGINE_DELAYS.asrMs, delays);
    const llm = new FakeLlmEngine(ENGINE_DELAYS.llmFirstTokenMs, LLM_DELTA_INTERVAL_MS, delays);
    const tts = new FakeTtsEngine(
      {
        firstByteMs: ENGINE_DELAYS.ttsFirstByteMs,
        sampleRate: TTS_SAMPLE_RATE,
        audioMs: TTS_AUDIO_MS,
        chunkMs: TTS_CHUNK_MS,
        chunksPerBurst: TTS_CHUNKS_PER_BURST,
        burstIntervalMs: TTS_BURST_INTERVAL_MS,
      },
      delays,
    );
    const engines: PipelineEngineResolver = {
      ttsSampleRate: () => TTS_SAMPLE_RATE,
      resolve: async (_config, call) => ({ vad: vadTimings.timed(vad.createStream(call.callId)), asr, llm, tts }),
    };
    const engine = new PipelineAgentEngine({ engines, createToolRunner: (config) => createToolRunner(config.tools) });
    return { engine, delays, runtime, vadTimings, workers: options.workers, batchMaxDelayMs: options.batchMaxDelayMs, close: () => runtime.close() };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

/** The bench's arithmetic (detection time, end-of-turn setting) assumes these defaults; fail loudly if they move. */
function assertConfigDefaults(): void {
  const config = parseAgentConfig(BENCH_AGENT_CONFIG);
  if (config.turn.minSilenceMs !== TURN_MIN_SILENCE_MS || config.interruptions.minSpeechMs !== INTERRUPTION_MIN_SPEECH_MS) {
    throw new Error(
      `agent config defaults changed (turn.minSilenceMs ${config.turn.minSilenceMs}, interruptions.minSpeechMs ${config.interruptions.minSpeechMs}); update latency-bench-settings.ts`,
    );
  }
}

/** The first inferences of a fresh ONNX session are slow; no call should pay for them. */
async function warmUp(vad: SileroVad): Promise<void> {
  const stream = vad.createStream('latency-bench-warm-up');
  try {
    const audio = new Int16Array(8000);
    for (let i = 0; i < audio.length; i++) audio[i] = Math.round(2000 * Math.sin((2 * Math.PI * 200 * i) / 8000));
    for (let start = 0; start < audio.length; start += 160) {
      stream.push(audio.subarray(start, start + 160));
      await stream.drained();
    }
  } finally {
    stream.close();
  }
}
