/** Between onnxruntime's tensors and the runtime's TensorData (what crosses the thread boundary). */
import * as ort from 'onnxruntime-node';
import type { TensorData } from '../contracts';

const CARRIED_TYPES = new Set<string>(['float32', 'float16', 'int64', 'int32', 'int8', 'uint8', 'bool']);

/** A view of an ort tensor's CPU data (no copy). */
export function asTensorData(tensor: ort.Tensor, label = 'tensor'): TensorData {
  if (!CARRIED_TYPES.has(tensor.type)) throw new Error(`${label} has element type ${tensor.type}, which the runtime does not carry`);
  return { type: tensor.type as TensorData['type'], data: tensor.data as TensorData['data'], dims: [...tensor.dims] };
}

export function toOrtTensor(tensor: TensorData): ort.Tensor {
  return new ort.Tensor(tensor.type, tensor.data, tensor.dims);
}
