/**
 * Cuts a streamed LLM reply into speakable chunks, so each can go to TTS while the LLM keeps
 * writing.
 *
 * - The first chunk is cut at the first sentence end or clause boundary (, ; : — –) once it has
 *   minFirstChunkChars: the sooner the first chunk, the sooner the caller hears something.
 * - Later chunks are cut at the first sentence end once they have minChunkChars; shorter
 *   sentences ride along with the next (fewer TTS calls, better prosody).
 * - A chunk that would pass maxChunkChars is cut at its last sentence end, else its last clause
 *   boundary, else its last space (preferring ones that leave it minChunkChars long); a chunk with
 *   no space at all (a long URL) is never cut inside a word.
 *
 * Cuts are only ever made at spaces of the normalised text (see SpeakableTextNormaliser), so the
 * chunks joined with single spaces give back exactly that text. A cut is only decided once the
 * text that could change it has arrived, so the chunks are the same however the reply was split
 * into deltas. flush() ends the reply and readies the chunker for the next one.
 */
import { boundaryKind, type BoundaryKind } from './speakable-boundaries';
import { SpeakableTextNormaliser } from './speakable-text-normaliser';

export interface SpeakableChunkerOptions {
  /** The first chunk may end at a clause boundary once it is this long; default 12. */
  minFirstChunkChars?: number;
  /** Later chunks end at a sentence end once they are this long; default 40. */
  minChunkChars?: number;
  /** A chunk longer than this is cut at the best boundary inside it; default 250. */
  maxChunkChars?: number;
}

interface Candidate {
  at: number;
  kind: BoundaryKind;
}

export class SpeakableChunker {
  private readonly minFirstChunkChars: number;
  private readonly minChunkChars: number;
  private readonly maxChunkChars: number;
  private readonly normaliser = new SpeakableTextNormaliser();
  /** Normalised text not yet in a chunk; `bufferOffset` is where it starts in the whole reply. */
  private buffer = '';
  private bufferOffset = 0;
  /** Reply offsets of list-number dots ("1. Billing"), which never end a sentence. */
  private readonly listNumberDots = new Set<number>();
  private isFirstChunk = true;
  /** Where the scan of the buffer goes on, and the cut places it has classified so far. */
  private scanAt = 0;
  private candidates: Candidate[] = [];

  constructor(options: SpeakableChunkerOptions = {}) {
    this.minFirstChunkChars = options.minFirstChunkChars ?? 12;
    this.minChunkChars = options.minChunkChars ?? 40;
    this.maxChunkChars = options.maxChunkChars ?? 250;
    validateOptions(this.minFirstChunkChars, this.minChunkChars, this.maxChunkChars);
  }

  /** Adds a delta of the reply; returns the chunks it completed (often none). */
  push(delta: string): string[] {
    if (typeof delta !== 'string') throw new TypeError(`SpeakableChunker.push expects a string delta, got ${delta === null ? 'null' : typeof delta}`);
    this.append(delta, false);
    return this.cutAll(false);
  }

  /** Ends the reply: returns the chunks still held (the last one may be short). */
  flush(): string[] {
    this.append('', true);
    const chunks = this.cutAll(true);
    const rest = this.buffer.trim();
    if (rest.length > 0) chunks.push(rest);
    this.resetForNextReply();
    return chunks;
  }

  private append(delta: string, final: boolean): void {
    const piece = this.normaliser.push(delta, final);
    const base = this.bufferOffset + this.buffer.length;
    for (const dot of piece.listNumberDots) this.listNumberDots.add(base + dot);
    this.buffer += piece.text;
  }

  private cutAll(final: boolean): string[] {
    const chunks: string[] = [];
    for (let cutAt = this.nextCut(final); cutAt !== undefined; cutAt = this.nextCut(final)) {
      chunks.push(this.buffer.slice(0, cutAt));
      // The space at cutAt is the one the chunks are joined with again.
      this.buffer = this.buffer.slice(cutAt + 1);
      this.bufferOffset += cutAt + 1;
      for (const dot of this.listNumberDots) if (dot < this.bufferOffset) this.listNumberDots.delete(dot);
      this.isFirstChunk = false;
      this.scanAt = 0;
      this.candidates = [];
    }
    return chunks;
  }

  /** Where the next chunk ends (a space in the buffer), or undefined until more text arrives. */
  private nextCut(final: boolean): number | undefined {
    const min = this.isFirstChunk ? this.minFirstChunkChars : this.minChunkChars;
    const max = this.maxChunkChars;
    const buffer = this.buffer;
    for (; this.scanAt < buffer.length; this.scanAt++) {
      const at = this.scanAt;
      // Every place within the limit is classified and none was good enough.
      if (at > max && this.candidates.length > 0) return this.forcedCut(min);
      if (buffer[at] !== ' ') continue;
      // A space at the very end: the next character decides its kind; at the reply's end it is no place to cut.
      if (at === buffer.length - 1) {
        if (!final) return undefined;
        break;
      }
      const kind = boundaryKind(buffer, at, (offset) => this.listNumberDots.has(this.bufferOffset + offset));
      // Past the limit with no space before it: the first space after it, whatever its kind.
      if (at > max) return at;
      if (at >= min && (kind === 'sentence' || (this.isFirstChunk && kind === 'clause'))) return at;
      this.candidates.push({ at, kind });
    }
    if (final && buffer.trimEnd().length > max && this.candidates.length > 0) return this.forcedCut(min);
    return undefined;
  }

  private forcedCut(min: number): number {
    const lastOf = (kinds: readonly BoundaryKind[]): Candidate | undefined => {
      for (let i = this.candidates.length - 1; i >= 0; i--) {
        const candidate = this.candidates[i]!;
        if (candidate.at >= min && kinds.includes(candidate.kind)) return candidate;
      }
      return undefined;
    };
    const choice = lastOf(['sentence']) ?? lastOf(['clause']) ?? lastOf(['sentence', 'clause', 'word']) ?? this.candidates[this.candidates.length - 1]!;
    return choice.at;
  }

  private resetForNextReply(): void {
    this.normaliser.reset();
    this.buffer = '';
    this.bufferOffset = 0;
    this.listNumberDots.clear();
    this.isFirstChunk = true;
    this.scanAt = 0;
    this.candidates = [];
  }
}

function validateOptions(minFirst: number, min: number, max: number): void {
  const problems: string[] = [];
  for (const [name, value] of [
    ['minFirstChunkChars', minFirst],
    ['minChunkChars', min],
    ['maxChunkChars', max],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) problems.push(`${name} must be a whole number >= 1, got ${value}`);
  }
  if (minFirst > max) problems.push(`minFirstChunkChars (${minFirst}) must not exceed maxChunkChars (${max})`);
  if (min > max) problems.push(`minChunkChars (${min}) must not exceed maxChunkChars (${max})`);
  if (problems.length > 0) throw new RangeError(`invalid speakable chunker options: ${problems.join('; ')}`);
}
