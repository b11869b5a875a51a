/**
 * A stand-in ONNX model for runtime tests, built with onnx-proto: `values[b] = table[indices[b]]`
 * (Gather over a 10-entry float table). onnxruntime rejects an index outside the table, which
 * lets a test put one failing request in a batch of good ones.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';

export const GATHER_TABLE = Array.from({ length: 10 }, (_, i) => i * 1.5);

export function writeGatherModel(): string {
  const valueInfo = (name: string, elemType: number): onnx.IValueInfoProto => ({
    name,
    type: { tensorType: { elemType, shape: { dim: [{ dimParam: 'batch' }] } } },
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'switchboard-tests',
    graph: {
      name: 'gather',
      initializer: [{ name: 'table', dims: [GATHER_TABLE.length], dataType: onnx.TensorProto.DataType.FLOAT, floatData: GATHER_TABLE }],
      node: [{ opType: 'Gather', input: ['table', 'indices'], output: ['values'], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] }],
      input: [valueInfo('indices', onnx.TensorProto.DataType.INT64)],
      output: [valueInfo('values', onnx.TensorProto.DataType.FLOAT)],
    },
  });
  const path = join(mkdtempSync(join(tmpdir(), 'switchboard-gather-')), 'gather.onnx');
  writeFileSync(path, onnx.ModelProto.encode(model).finish());
  return path;
}
