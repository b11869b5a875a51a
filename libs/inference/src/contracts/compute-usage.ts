/** Where local inference ran: the onnxruntime execution provider of the model's session. */
export type InferenceDevice = 'cpu' | 'cuda' | 'webgpu';

/**
 * A call's share of one model run: a batch's run time is split between the calls in it by their
 * rows, so the cost ledger can charge each call its GPU/CPU seconds.
 */
export interface ComputeUsageEntry {
  callId: string;
  model: string;
  device: InferenceDevice;
  seconds: number;
  /** Rows of this call in the batch, and the batch's total rows. */
  rows: number;
  batchRows: number;
}

export interface ComputeUsageSink {
  record(entry: ComputeUsageEntry): void;
}
