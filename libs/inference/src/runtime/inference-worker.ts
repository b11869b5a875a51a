/**
 * Inference worker thread: owns one onnxruntime session per model and runs them, so ONNX never
 * runs on the caller's event loop (one Node thread serialises ONNX runs; several workers do not).
 *
 * Messages are handled strictly in arrival order: a replacement worker receives its model loads
 * before any run, and a run must never see a session that is still being created.
 */
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import type { InferenceDevice, TensorData } from '../contracts';
import { executionProvidersFor, probeProvider } from './provider-probes';
import { asTensorData, toOrtTensor } from './ort-tensor-data';
import { SequenceStepRunner, type StepRequest } from './sequence-step-runner';
import { SequenceStore } from './sequence-store';
import type { StepBatching } from './step-batching';
import { transferListOf, type TensorMetadata, type WorkerRequest, type WorkerResponse, type WorkerSessionSettings } from './worker-protocol';

const port = parentPort;
if (!port) throw new Error('inference-worker must run in a worker thread');

const sessions = new Map<string, ort.InferenceSession>();
/** Stateful sequences' tensors between runs (decoder KV caches): they never leave this thread. */
const sequenceStore = new SequenceStore();
const stepRunner = new SequenceStepRunner(sequenceStore);
let pending: Promise<void> = Promise.resolve();
/** Set by an `exit` request: nothing more is run or answered, the thread ends after the current run. */
let exiting = false;

port.on('message', (request: WorkerRequest) => {
  if (request.type === 'exit') {
    exiting = true;
    pending = pending.then(() => exitThread(request.release, request.exitCode));
    return;
  }
  pending = pending.then(() => (exiting ? undefined : handle(request)));
});

async function exitThread(release: boolean, exitCode: number): Promise<void> {
  if (release) {
    sequenceStore.clear();
    for (const session of sessions.values()) await session.release().catch(() => undefined);
    sessions.clear();
  }
  process.exit(exitCode);
}

async function handle(request: WorkerRequest): Promise<void> {
  try {
    switch (request.type) {
      case 'exit':
        return; // handled on arrival, see the message listener
      case 'probe':
        reply({ type: 'probed', requestId: request.requestId, ...(await probeProvider(request.provider)) });
        return;
      case 'load':
        reply(await load(request.requestId, request.modelKey, request.path, request.executionProvider, request.settings));
        return;
      case 'run':
        await run(request.requestId, request.modelKey, request.feeds);
        return;
      case 'run_steps':
        await runSteps(request.requestId, request.modelKey, request.steps, request.batching);
        return;
      case 'end_sequence':
        sequenceStore.end(request.sequenceId);
        reply({ type: 'ended', requestId: request.requestId });
        return;
    }
  } catch (error) {
    reply({ type: 'failed', requestId: request.requestId, message: error instanceof Error ? error.message : String(error) });
  }
}

function reply(response: WorkerResponse, transfer: ArrayBuffer[] = []): void {
  if (exiting) return; // a crash answers nothing
  port!.postMessage(response, transfer);
}

async function load(requestId: number, modelKey: string, path: string, provider: InferenceDevice, settings: WorkerSessionSettings): Promise<WorkerResponse> {
  const previous = sessions.get(modelKey);
  if (previous) return { type: 'loaded', requestId, ...metadataOf(previous) };
  const session = await ort.InferenceSession.create(path, sessionOptions(provider, settings));
  sessions.set(modelKey, session);
  return { type: 'loaded', requestId, ...metadataOf(session) };
}

async function run(requestId: number, modelKey: string, feeds: Record<string, TensorData>): Promise<void> {
  const session = sessionOf(modelKey);
  const ortFeeds: Record<string, ort.Tensor> = {};
  for (const [name, tensor] of Object.entries(feeds)) ortFeeds[name] = toOrtTensor(tensor);
  const startedAt = performance.now();
  const results = await session.run(ortFeeds);
  const runMs = performance.now() - startedAt;
  const outputs: Record<string, TensorData> = {};
  for (const [name, value] of Object.entries(results)) outputs[name] = asTensorData(value, `output ${name}`);
  reply({ type: 'result', requestId, outputs, runMs }, transferListOf(outputs));
}

async function runSteps(requestId: number, modelKey: string, steps: StepRequest[], batching: StepBatching): Promise<void> {
  const { outcomes, runs } = await stepRunner.run(modelKey, sessionOf(modelKey), steps, batching);
  reply({ type: 'step_results', requestId, outcomes, runs }, transferListOf(...outcomes.map((outcome) => ('outputs' in outcome ? outcome.outputs : {}))));
}

function sessionOf(modelKey: string): ort.InferenceSession {
  const session = sessions.get(modelKey);
  if (!session) throw new Error(`model ${modelKey} is not loaded in this worker`);
  return session;
}

function metadataOf(session: ort.InferenceSession): { inputs: TensorMetadata[]; outputs: TensorMetadata[] } {
  const describe = (metadata: readonly ort.InferenceSession.ValueMetadata[]): TensorMetadata[] =>
    metadata.map((entry) => (entry.isTensor ? { name: entry.name, type: entry.type, shape: [...entry.shape] } : { name: entry.name, type: 'non-tensor', shape: [] }));
  return { inputs: describe(session.inputMetadata), outputs: describe(session.outputMetadata) };
}

function sessionOptions(provider: InferenceDevice, settings: WorkerSessionSettings): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: executionProvidersFor(provider),
    intraOpNumThreads: settings.intraOpNumThreads,
    interOpNumThreads: settings.interOpNumThreads,
    executionMode: settings.executionMode,
    graphOptimizationLevel: settings.graphOptimizationLevel,
    enableCpuMemArena: true,
    enableMemPattern: true,
    // Failures reach the caller as EngineErrors carrying onnxruntime's message; printing them
    // natively to stderr as well would only duplicate them outside the application's logger.
    logSeverityLevel: 4,
  };
}
