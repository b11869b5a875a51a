/**
 * Checks a request's feeds against the model's inputs before it joins a batch: one malformed
 * request must fail on its own with a clear message, never take a whole batch of other calls'
 * requests down with it inside onnxruntime.
 */
import { EngineError, type TensorData, type TensorElementType } from '../contracts';
import { elementCount } from './tensor-batching';
import type { TensorMetadata } from './worker-protocol';
import { RUNTIME_ENGINE } from './worker-pool';

const ARRAY_TYPE_OF: Record<TensorElementType, string> = {
  float32: 'Float32Array',
  float16: 'Uint16Array',
  int64: 'BigInt64Array',
  int32: 'Int32Array',
  int8: 'Int8Array',
  uint8: 'Uint8Array',
  bool: 'Uint8Array',
};

export function validateFeeds(model: string, feeds: Record<string, TensorData>, inputs: readonly TensorMetadata[]): void {
  const fail = (detail: string): never => {
    throw new EngineError(RUNTIME_ENGINE, 'bad_request', `${model}: ${detail}`, false);
  };
  for (const name of Object.keys(feeds)) {
    if (!inputs.some((input) => input.name === name)) fail(`unknown input '${name}' (inputs: ${inputs.map((input) => input.name).join(', ')})`);
  }
  for (const input of inputs) {
    const tensor = feeds[input.name];
    if (!tensor) return fail(`missing input '${input.name}'`);
    if (tensor.type !== input.type) fail(`input '${input.name}' must be ${input.type}, got ${tensor.type}`);
    const arrayType = ARRAY_TYPE_OF[tensor.type];
    if (tensor.data?.constructor?.name !== arrayType) fail(`input '${input.name}' (${tensor.type}) must hold a ${arrayType}`);
    if (!Array.isArray(tensor.dims) || tensor.dims.some((dim) => !Number.isInteger(dim) || dim < 0)) fail(`input '${input.name}' has invalid dims ${JSON.stringify(tensor.dims)}`);
    if (tensor.dims.length !== input.shape.length) fail(`input '${input.name}' must have ${input.shape.length} dims [${input.shape.join(', ')}], got [${tensor.dims.join(', ')}]`);
    input.shape.forEach((expected, axis) => {
      if (typeof expected === 'number' && tensor.dims[axis] !== expected) fail(`input '${input.name}' dim ${axis} must be ${expected}, got [${tensor.dims.join(', ')}]`);
    });
    const expectedLength = elementCount(tensor.dims);
    if (tensor.data.length !== expectedLength) fail(`input '${input.name}' dims [${tensor.dims.join(', ')}] need ${expectedLength} elements, data has ${tensor.data.length}`);
  }
}
