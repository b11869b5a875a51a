/**
 * What the fake Realtime server says in one response. Tests script the model's side of the
 * conversation: the audio it speaks (bytes the test can recognise), its transcript, a function
 * call, the usage it bills.
 */
export interface FakeResponseScript {
  /** Assistant audio, one `response.output_audio.delta` per chunk, in order, sent as is. */
  audioChunks?: readonly Uint8Array[];
  /** Pause between deltas; 0 still yields to the event loop between them, so a cancel can land mid-response. */
  chunkIntervalMs?: number;
  /** Assistant transcript: sent word by word alongside the audio (keeping pace with its bytes), then whole in `...transcript.done`. */
  transcript?: string;
  /** A function call the model makes (emitted before any audio). */
  functionCall?: { name: string; arguments: string; callId?: string };
  /** Deltas still sent after `response.cancel` arrives, as a real server's in-flight audio would be. */
  lateChunksAfterCancel?: readonly Uint8Array[];
  /** `response.done` usage in the provider's own shape; DEFAULT_FAKE_USAGE when absent. */
  usage?: Record<string, unknown>;
  /** Final status when not cancelled. */
  status?: 'completed' | 'incomplete' | 'failed';
}

/** Usage a response reports unless its script says otherwise (GA shape, all detail fields present). */
export const DEFAULT_FAKE_USAGE: Readonly<Record<string, unknown>> = Object.freeze({
  total_tokens: 190,
  input_tokens: 120,
  output_tokens: 70,
  input_token_details: {
    text_tokens: 80,
    audio_tokens: 40,
    image_tokens: 0,
    cached_tokens: 64,
    cached_tokens_details: { text_tokens: 48, audio_tokens: 16, image_tokens: 0 },
  },
  output_token_details: { text_tokens: 20, audio_tokens: 50 },
});

/**
 * `count` chunks of mu-law bytes, each distinct from every other chunk (its index is in every
 * byte's pattern), so a test can tell which chunks reached it and in what order.
 */
export function recognisableMulawChunks(count: number, bytesPerChunk = 160, seed = 1): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let chunk = 0; chunk < count; chunk += 1) {
    const bytes = new Uint8Array(bytesPerChunk);
    for (let i = 0; i < bytesPerChunk; i += 1) bytes[i] = (seed * 101 + chunk * 37 + i * 13) & 0xff;
    chunks.push(bytes);
  }
  return chunks;
}
