import { onnx } from 'onnx-proto';

/**
 * A small helper over onnx-proto for writing ONNX graphs from TypeScript: named inputs/outputs with
 * symbolic dims, initializers stored as raw little-endian bytes, and nodes with typed attributes.
 * Subgraphs (for `If`) share the root's name counter and initializers, which ONNX lets a subgraph
 * reference from the outer scope.
 */

export type OnnxElementType = 'float32' | 'int64' | 'bool' | 'int8' | 'uint8';
/** A fixed size or a symbolic name such as 'batch_size'. */
export type OnnxDim = number | string;

export type OnnxAttribute =
  | { int: number }
  | { float: number }
  | { ints: number[] }
  | { string: string }
  | { graph: onnx.IGraphProto }
  | { tensor: onnx.ITensorProto };

const ELEMENT_TYPES: Record<OnnxElementType, onnx.TensorProto.DataType> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
  int8: onnx.TensorProto.DataType.INT8,
  uint8: onnx.TensorProto.DataType.UINT8,
};

/** ONNX IR version 8 with opset 17 (LayerNormalization): loads in every onnxruntime since 1.14. */
export const STAND_IN_IR_VERSION = 8;
export const STAND_IN_OPSET = 17;

export class OnnxGraphBuilder {
  private readonly nodes: onnx.INodeProto[] = [];
  private readonly inputs: onnx.IValueInfoProto[] = [];
  private readonly outputs: onnx.IValueInfoProto[] = [];
  private readonly initializers: onnx.ITensorProto[];
  private readonly counter: { next: number };
  private readonly isRoot: boolean;

  constructor(parent?: OnnxGraphBuilder) {
    this.initializers = parent ? parent.initializers : [];
    this.counter = parent ? parent.counter : { next: 0 };
    this.isRoot = parent === undefined;
  }

  /** A builder for an `If` branch: its nodes are its own, its weights go to this (outer) graph. */
  subgraph(): OnnxGraphBuilder {
    return new OnnxGraphBuilder(this);
  }

  input(name: string, type: OnnxElementType, dims: OnnxDim[]): string {
    this.inputs.push(valueInfo(name, type, dims));
    return name;
  }

  /** Declares a graph output; `dims` undefined leaves the shape unstated (If branch outputs). */
  output(name: string, type: OnnxElementType, dims?: OnnxDim[]): string {
    this.outputs.push(valueInfo(name, type, dims));
    return name;
  }

  floatTensor(name: string, dims: number[], values: Float32Array): string {
    if (values.length !== dims.reduce((a, b) => a * b, 1)) {
      throw new Error(`initializer ${name}: ${values.length} values do not fill dims [${dims.join(', ')}]`);
    }
    this.initializers.push({ name, dims, dataType: ELEMENT_TYPES.float32, rawData: bytesOf(values) });
    return name;
  }

  int64Tensor(name: string, dims: number[], values: readonly number[]): string {
    const data = BigInt64Array.from(values.map((v) => BigInt(v)));
    this.initializers.push({ name, dims, dataType: ELEMENT_TYPES.int64, rawData: bytesOf(data) });
    return name;
  }

  int8Tensor(name: string, dims: number[], values: Int8Array): string {
    if (values.length !== dims.reduce((a, b) => a * b, 1)) {
      throw new Error(`initializer ${name}: ${values.length} values do not fill dims [${dims.join(', ')}]`);
    }
    this.initializers.push({ name, dims, dataType: ELEMENT_TYPES.int8, rawData: bytesOf(values) });
    return name;
  }

  /** A float scalar constant (dims []). */
  floatScalar(value: number): string {
    return this.floatTensor(this.uniqueName('const'), [], Float32Array.of(value));
  }

  /** A 1-D int64 constant (shapes, axes). */
  int64Vector(values: readonly number[]): string {
    return this.int64Tensor(this.uniqueName('const'), [values.length], values);
  }

  int64Scalar(value: number): string {
    return this.int64Tensor(this.uniqueName('const'), [], [value]);
  }

  /** Adds a node and returns its output names (fresh names unless given). */
  nodeOutputs(
    opType: string,
    inputs: readonly string[],
    outputs: number | readonly string[],
    attributes: Record<string, OnnxAttribute> = {},
  ): string[] {
    const outputNames =
      typeof outputs === 'number' ? Array.from({ length: outputs }, () => this.uniqueName(opType)) : [...outputs];
    this.nodes.push({
      opType,
      name: this.uniqueName(`${opType}_node`),
      input: [...inputs],
      output: outputNames,
      attribute: Object.entries(attributes).map(([name, value]) => attribute(name, value)),
    });
    return outputNames;
  }

  /** Adds a single-output node and returns the output name. */
  node(opType: string, inputs: readonly string[], attributes: Record<string, OnnxAttribute> = {}, outputName?: string): string {
    const [output] = this.nodeOutputs(opType, inputs, outputName === undefined ? 1 : [outputName], attributes);
    return output as string;
  }

  uniqueName(prefix: string): string {
    this.counter.next += 1;
    return `${prefix}_${this.counter.next}`;
  }

  toGraph(name: string): onnx.IGraphProto {
    return {
      name,
      node: this.nodes,
      input: this.inputs,
      output: this.outputs,
      // Only the root graph carries weights; branches read them from the outer scope.
      initializer: this.isRoot ? this.initializers : [],
    };
  }

  /** Serialises the graph as a complete model file. */
  toModelBytes(graphName: string, producer = 'switchboard-stand-in'): Uint8Array {
    const model: onnx.IModelProto = {
      irVersion: STAND_IN_IR_VERSION,
      producerName: producer,
      producerVersion: '1',
      opsetImport: [{ domain: '', version: STAND_IN_OPSET }],
      graph: this.toGraph(graphName),
    };
    return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
  }
}

function valueInfo(name: string, type: OnnxElementType, dims?: OnnxDim[]): onnx.IValueInfoProto {
  const tensorType: onnx.TypeProto.ITensor = { elemType: ELEMENT_TYPES[type] };
  if (dims) {
    tensorType.shape = { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) };
  }
  return { name, type: { tensorType } };
}

function attribute(name: string, value: OnnxAttribute): onnx.IAttributeProto {
  const types = onnx.AttributeProto.AttributeType;
  if ('int' in value) return { name, type: types.INT, i: value.int };
  if ('float' in value) return { name, type: types.FLOAT, f: value.float };
  if ('ints' in value) return { name, type: types.INTS, ints: value.ints };
  if ('string' in value) return { name, type: types.STRING, s: new TextEncoder().encode(value.string) };
  if ('graph' in value) return { name, type: types.GRAPH, g: value.graph };
  return { name, type: types.TENSOR, t: value.tensor };
}

function bytesOf(values: Float32Array | BigInt64Array | Int8Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}
