import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { createInferenceRuntime, type BatchRecord, type OnnxInferenceRuntime } from '../runtime';
import { writePiperStandIn, writeSmartTurnStandIn } from '@switchboard/testing';
import { SmartTurnClassifier } from './smart-turn-classifier';

jest.setTimeout(20_000);

const FIXTURES = join(__dirname, '../../../../test/fixtures/speech');
const speech = (name: string): Int16Array => readWav(readFileSync(join(FIXTURES, `${name}.16k.wav`))).samples;

describe('SmartTurnClassifier on the stand-in Smart Turn model (real runtime)', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;
  let classifier: SmartTurnClassifier;
  const batches: BatchRecord[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'smart-turn-'));
    await writeSmartTurnStandIn(join(dir, 'smart-turn.onnx'));
    runtime = await createInferenceRuntime({
      device: 'cpu',
      workers: 1,
      batchMaxDelayMs: 20,
      onBatch: (batch) => batches.push(batch),
      logger: { log: () => undefined, warn: () => undefined },
    });
    classifier = await SmartTurnClassifier.load({ runtime, modelPath: join(dir, 'smart-turn.onnx') });
  });

  afterAll(async () => {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('returns a probability in [0, 1], the same for the same audio and different for different audio', async () => {
    expect(classifier.name).toBe('smart-turn:smart-turn');
    const goodbye = await classifier.probability(speech('goodbye'), { callId: 'call-1' });
    const again = await classifier.probability(speech('goodbye'), { callId: 'call-1' });
    const hours = await classifier.probability(speech('hours'), { callId: 'call-1' });
    const silence = await classifier.probability(new Int16Array(16000), { callId: 'call-1' });
    for (const p of [goodbye, hours, silence]) {
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(1);
    }
    expect(again).toBe(goodbye);
    expect(new Set([goodbye, hours, silence]).size).toBe(3);
  });

  it('looks only at the last 8 seconds', async () => {
    const tail = speech('order-status');
    const long = new Int16Array(128000 + 32000);
    long.set(speech('hours').subarray(0, 32000), 0);
    long.set(tail.subarray(tail.length - 128000 > 0 ? tail.length - 128000 : 0), long.length - Math.min(tail.length, 128000));
    const lastEight = long.subarray(long.length - 128000);
    expect(await classifier.probability(long)).toBe(await classifier.probability(lastEight));
  });

  it('concurrent calls share one batch and get their one-at-a-time results', async () => {
    const audios = ['goodbye', 'hours', 'transfer', 'interrupt'].map(speech);
    const alone: number[] = [];
    for (const audio of audios) alone.push(await classifier.probability(audio));
    batches.length = 0;
    const together = await Promise.all(audios.map((audio, i) => classifier.probability(audio, { callId: `call-${i}` })));
    // Equal to float32 rounding: onnxruntime's kernels may sum in another order for a batch.
    together.forEach((p, i) => expect(p).toBeCloseTo(alone[i]!, 6));
    expect(Math.max(...batches.map((batch) => batch.rows))).toBeGreaterThan(1);
  });

  it("with output 'logit', applies the sigmoid itself", async () => {
    const logit = await SmartTurnClassifier.load({ runtime, modelPath: join(dir, 'smart-turn.onnx'), name: 'smart-turn-logit', output: 'logit' });
    const raw = await classifier.probability(speech('goodbye'));
    expect(await logit.probability(speech('goodbye'))).toBeCloseTo(1 / (1 + Math.exp(-raw)), 6);
  });

  it('refuses a model that is not an end-of-turn classifier', async () => {
    const piper = join(dir, 'voice.onnx');
    await writePiperStandIn(piper);
    await expect(SmartTurnClassifier.load({ runtime, modelPath: piper })).rejects.toMatchObject({ code: 'model_missing', retryable: false });
  });
});
