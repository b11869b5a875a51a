/**
 * Token ids -> text deltas while a reply streams. A multi-byte UTF-8 character is often split
 * across byte-level tokens ('☎' can be three tokens of one byte each); the streaming TextDecoder
 * keeps the incomplete bytes until the character is whole, so a delta never carries half a
 * character (or a U+FFFD that would later turn into the real one).
 */
export class IncrementalTextDecoder {
  private readonly decoder = new TextDecoder('utf-8');

  /**
   * @param bytesOf the bytes a token stands for (undefined: nothing to print, e.g. an unknown id)
   * @param isSilent tokens that never print (special tokens such as `<|im_end|>`)
   */
  constructor(
    private readonly bytesOf: (id: number) => Uint8Array | undefined,
    private readonly isSilent: (id: number) => boolean = () => false,
  ) {}

  /** The complete characters this token finishes ('' while a character is still incomplete). */
  push(id: number): string {
    if (this.isSilent(id)) return '';
    const bytes = this.bytesOf(id);
    if (!bytes || bytes.length === 0) return '';
    return this.decoder.decode(bytes, { stream: true });
  }

  /** The reply ended: bytes of a character that never completed come out as U+FFFD. */
  end(): string {
    return this.decoder.decode();
  }
}
