import type { OnnxGraphBuilder } from './onnx-graph-builder';
import { SeededRandom } from './seeded-random';

/**
 * How a stand-in's matrix products are stored and run: 'fp32', or 'int8' as onnxruntime's dynamic
 * quantization writes them (`*_int8.onnx`/`*_quantized.onnx` on the Hub): int8 weights with a
 * scale, activations quantized per run (DynamicQuantizeLinear), MatMulInteger, back to float.
 */
export type StandInPrecision = 'fp32' | 'int8';

/**
 * Transformer building blocks (pre-LayerNorm attention + feed-forward, as in Whisper) written as
 * ONNX nodes. Each weight's values come from a generator seeded by the model seed and the weight's
 * name, so two graphs that share a weight name (the merged and the no-cache Whisper decoders) get
 * bit-identical weights whatever order they are created in, and an int8 variant quantizes the
 * same weights its fp32 model has.
 */
export class StandInLayers {
  constructor(
    readonly graph: OnnxGraphBuilder,
    private readonly seed: number,
    readonly precision: StandInPrecision = 'fp32',
  ) {}

  /** The same layers writing nodes into another (sub)graph. */
  in(graph: OnnxGraphBuilder): StandInLayers {
    return new StandInLayers(graph, this.seed, this.precision);
  }

  /** A seeded normal weight, scaled 1/sqrt(fan-in) unless told, keeping activations near unit size. */
  weight(name: string, dims: number[], scale = 1 / Math.sqrt(dims[0] ?? 1)): string {
    return this.graph.floatTensor(name, dims, this.weightValues(name, dims, scale));
  }

  /** `x` times a seeded weight matrix [in, out]: a MatMul, or its int8 form in an int8 variant. */
  project(x: string, name: string, dims: [number, number], scale = 1 / Math.sqrt(dims[0])): string {
    if (this.precision === 'fp32') return this.graph.node('MatMul', [x, this.weight(name, dims, scale)]);
    const values = this.weightValues(name, dims, scale);
    let largest = 0;
    for (const value of values) largest = Math.max(largest, Math.abs(value));
    const step = largest / 127 || 1;
    const quantized = Int8Array.from(values, (value) => Math.round(value / step));
    const graph = this.graph;
    const [xq, xScale, xZero] = graph.nodeOutputs('DynamicQuantizeLinear', [x], 3) as [string, string, string];
    const zero = graph.int8Tensor(graph.uniqueName(`${name}.zero_point`), [], Int8Array.of(0));
    const product = graph.node('MatMulInteger', [xq, graph.int8Tensor(`${name}.quantized`, dims, quantized), xZero, zero]);
    const scaleBoth = graph.node('Mul', [xScale, graph.floatScalar(step)]);
    return graph.node('Mul', [graph.node('Cast', [product], { to: { int: 1 } }), scaleBoth]);
  }

  private weightValues(name: string, dims: readonly number[], scale: number): Float32Array {
    const count = dims.reduce((a, b) => a * b, 1);
    return new SeededRandom(hashSeed(this.seed, name)).normalArray(count, scale);
  }

  constant(name: string, dims: number[], value: number): string {
    const count = dims.reduce((a, b) => a * b, 1);
    return this.graph.floatTensor(name, dims, new Float32Array(count).fill(value));
  }

  linear(x: string, inDim: number, outDim: number, name: string, withBias = true): string {
    const product = this.project(x, `${name}.weight`, [inDim, outDim]);
    if (!withBias) return product;
    return this.graph.node('Add', [product, this.weight(`${name}.bias`, [outDim], 0.02)]);
  }

  layerNorm(x: string, dim: number, name: string): string {
    const scale = this.constant(`${name}.weight`, [dim], 1);
    const bias = this.constant(`${name}.bias`, [dim], 0);
    return this.graph.node('LayerNormalization', [x, scale, bias], { axis: { int: -1 }, epsilon: { float: 1e-5 } });
  }

  /** [B, T, heads*headDim] -> [B, heads, T, headDim]. */
  splitHeads(x: string, heads: number, headDim: number): string {
    const shaped = this.graph.node('Reshape', [x, this.graph.int64Vector([0, -1, heads, headDim])]);
    return this.graph.node('Transpose', [shaped], { perm: { ints: [0, 2, 1, 3] } });
  }

  /** [B, heads, T, headDim] -> [B, T, heads*headDim]. */
  mergeHeads(x: string): string {
    const transposed = this.graph.node('Transpose', [x], { perm: { ints: [0, 2, 1, 3] } });
    return this.graph.node('Reshape', [transposed, this.graph.int64Vector([0, 0, -1])]);
  }

  /** Scaled dot-product attention; `allowed` (bool, broadcastable to the scores) masks keys out. */
  attention(query: string, key: string, value: string, headDim: number, allowed?: string): string {
    const keyT = this.graph.node('Transpose', [key], { perm: { ints: [0, 1, 3, 2] } });
    const scores = this.graph.node('Mul', [this.graph.node('MatMul', [query, keyT]), this.graph.floatScalar(1 / Math.sqrt(headDim))]);
    const masked = allowed ? this.graph.node('Where', [allowed, scores, this.graph.floatScalar(-1e9)]) : scores;
    const weights = this.graph.node('Softmax', [masked], { axis: { int: -1 } });
    return this.graph.node('MatMul', [weights, value]);
  }

  feedForward(x: string, dim: number, hiddenDim: number, name: string): string {
    const hidden = this.graph.node('Relu', [this.linear(x, dim, hiddenDim, `${name}.fc1`)]);
    return this.linear(hidden, hiddenDim, dim, `${name}.fc2`);
  }
}

/** FNV-1a over the name, mixed with the model seed. */
function hashSeed(seed: number, name: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
