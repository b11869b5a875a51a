/** A plain tensor that crosses worker-thread boundaries (typed arrays transfer; ort.Tensor does not). */
export type TensorElementType = 'float32' | 'float16' | 'int64' | 'int32' | 'int8' | 'uint8' | 'bool';

export interface TensorData {
  type: TensorElementType;
  data: Float32Array | Uint16Array | BigInt64Array | Int32Array | Int8Array | Uint8Array;
  dims: number[];
}
