/**
 * An append-only byte store that grows by doubling, so recording a call costs O(log n)
 * allocations rather than one per frame.
 */
export class ByteRecorder {
  private bytes: Uint8Array;
  private length = 0;

  constructor(initialCapacityBytes = 8000 * 30) {
    this.bytes = new Uint8Array(Math.max(1, initialCapacityBytes));
  }

  get byteLength(): number {
    return this.length;
  }

  append(source: Uint8Array): void {
    this.reserve(source.length);
    this.bytes.set(source, this.length);
    this.length += source.length;
  }

  appendFill(value: number, count: number): void {
    if (count <= 0) return;
    this.reserve(count);
    this.bytes.fill(value, this.length, this.length + count);
    this.length += count;
  }

  /** A copy of everything recorded so far (later appends do not change it). */
  toUint8Array(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  private reserve(extraBytes: number): void {
    const needed = this.length + extraBytes;
    if (needed <= this.bytes.length) return;
    let capacity = this.bytes.length * 2;
    while (capacity < needed) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}
