/**
 * Joins chunks of audio into one array. A single chunk is returned as it is, not copied: callers
 * that go on to mutate the result must copy it themselves.
 */
export function concatPcm16(parts: readonly Int16Array[]): Int16Array {
  return parts.length === 1 ? parts[0]! : joinInto(parts, new Int16Array(totalLength(parts)));
}

/** concatPcm16 for float samples (model outputs before conversion to PCM16). */
export function concatFloat32(parts: readonly Float32Array[]): Float32Array {
  return parts.length === 1 ? parts[0]! : joinInto(parts, new Float32Array(totalLength(parts)));
}

function totalLength(parts: readonly ArrayLike<number>[]): number {
  return parts.reduce((sum, part) => sum + part.length, 0);
}

function joinInto<T extends Int16Array | Float32Array>(parts: readonly T[], joined: T): T {
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
