/**
 * What an inference worker holds for each stateful sequence (a call's decoder run: its KV cache,
 * its encoder states) between runs. Bounded, because the callers that should end their sequences
 * are engines of live calls, and a call that dies without ending one must not leak its cache for
 * the life of the process: a sequence idle past `idleMs` is dropped, and past `maxSequences` the
 * least recently used one goes. A run of a dropped sequence fails with SEQUENCE_LOST_MESSAGE, and
 * its caller starts over.
 */
import { totalmem } from 'node:os';
import type { HeldTensor } from './batch-row-view';

/** The start of the error a run gets when the worker no longer holds its sequence. */
export const SEQUENCE_LOST_MESSAGE = 'sequence state lost';

export interface SequenceStoreLimits {
  maxSequences: number;
  /** Bytes of held tensors: a whisper-base sequence alone holds about 37 MB of cross-attention keys. */
  maxBytes: number;
  idleMs: number;
}

/** An eighth of the machine's memory per worker: overload evicts (callers start over) rather than exhausts memory. */
export const DEFAULT_SEQUENCE_LIMITS: SequenceStoreLimits = { maxSequences: 4096, maxBytes: Math.floor(totalmem() / 8), idleMs: 120_000 };

interface HeldSequence {
  modelKey: string;
  tensors: Record<string, HeldTensor>;
  bytes: number;
  lastUsedAt: number;
}

const BYTES_PER_ELEMENT: Partial<Record<string, number>> = { float32: 4, float16: 2, int64: 8, int32: 4, int8: 1, uint8: 1, bool: 1 };

/**
 * A tensor's size from its dims (its data may live on a GPU, where `data` cannot be read). A
 * sequence's rows of a batch count as their own share of it.
 */
function bytesOf(tensor: HeldTensor): number {
  return tensor.dims.reduce((product, dim) => product * dim, 1) * (BYTES_PER_ELEMENT[tensor.type] ?? 8);
}

export class SequenceStore {
  /** Insertion order is use order: a Map re-inserted on each use is an LRU list. */
  private readonly sequences = new Map<string, HeldSequence>();
  private heldBytes = 0;

  constructor(
    private readonly limits: SequenceStoreLimits = DEFAULT_SEQUENCE_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.sequences.size;
  }

  /**
   * The tensors a run of `id` starts from: empty on its first run; on later runs what it held,
   * or an error when that is gone (dropped as idle or least recently used, or held for another model).
   */
  begin(id: string, modelKey: string, first: boolean): Record<string, HeldTensor> {
    this.dropIdle();
    const held = this.sequences.get(id);
    if (first) {
      this.end(id);
      return {};
    }
    if (!held) throw new Error(`${SEQUENCE_LOST_MESSAGE}: sequence ${id} is not held by this worker (ended, idle too long, or evicted)`);
    if (held.modelKey !== modelKey) throw new Error(`${SEQUENCE_LOST_MESSAGE}: sequence ${id} belongs to model ${held.modelKey}, not ${modelKey}`);
    return held.tensors;
  }

  /** Keeps `tensors` as what the sequence's next run starts from. */
  keep(id: string, modelKey: string, tensors: Record<string, HeldTensor>): void {
    this.end(id);
    const bytes = Object.values(tensors).reduce((sum, tensor) => sum + bytesOf(tensor), 0);
    this.sequences.set(id, { modelKey, tensors, bytes, lastUsedAt: this.now() });
    this.heldBytes += bytes;
    // Least recently used first; the sequence just kept goes last (a lone one over the budget stays).
    while (this.sequences.size > this.limits.maxSequences || (this.heldBytes > this.limits.maxBytes && this.sequences.size > 1)) {
      this.end(this.sequences.keys().next().value as string);
    }
  }

  /** Bytes of tensors held for all sequences. */
  get bytes(): number {
    return this.heldBytes;
  }

  end(id: string): void {
    const held = this.sequences.get(id);
    if (!held) return;
    this.sequences.delete(id);
    this.heldBytes -= held.bytes;
  }

  clear(): void {
    this.sequences.clear();
    this.heldBytes = 0;
  }

  private dropIdle(): void {
    const cutoff = this.now() - this.limits.idleMs;
    // Oldest first: stop at the first one used recently enough.
    for (const [id, held] of this.sequences) {
      if (held.lastUsedAt > cutoff) break;
      this.end(id);
    }
  }
}
