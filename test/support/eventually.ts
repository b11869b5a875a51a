/**
 * Polls until `read` returns a value that passes `accept` (records are finalised asynchronously).
 * Throws when none does within the time, naming the last value: a wait that ran out and returned
 * anyway surfaced later as a puzzling assertion, far from the condition that was never met.
 */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value)) {
    if (Date.now() >= deadline) throw new Error(`eventually: no value was accepted within ${timeoutMs} ms; the last one read was ${preview(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 600 ? `${text.slice(0, 600)}… (${text.length} characters)` : text;
}
