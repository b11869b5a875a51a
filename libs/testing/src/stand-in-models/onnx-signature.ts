import * as ort from 'onnxruntime-node';

/** A model's inputs and outputs as onnxruntime reports them: 'name type [dims]' per line. */
export async function onnxSignature(path: string): Promise<{ inputs: string[]; outputs: string[] }> {
  const session = await ort.InferenceSession.create(path);
  try {
    const describe = (metadata: readonly ort.InferenceSession.ValueMetadata[]): string[] =>
      metadata.map((value) => (value.isTensor ? `${value.name} ${value.type} [${value.shape.join(', ')}]` : `${value.name} (not a tensor)`));
    return { inputs: describe(session.inputMetadata), outputs: describe(session.outputMetadata) };
  } finally {
    await session.release();
  }
}
