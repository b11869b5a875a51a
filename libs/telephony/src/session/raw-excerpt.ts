/** Long enough to recognise a frame in a log, short enough not to copy a payload into it. */
export const RAW_EXCERPT_CHARS = 160;

const CUSTOM_PARAMETERS_KEY = '"customParameters"';

/**
 * The start of an inbound frame, safe to log. Custom parameters carry the single-use stream token,
 * so everything from that key on is replaced: a rejected `start` must not leak it into logs.
 */
export function rawExcerpt(text: unknown): string {
  if (typeof text !== 'string') return `<${typeof text}>`;
  const secretsAt = text.indexOf(CUSTOM_PARAMETERS_KEY);
  const safe = secretsAt === -1 ? text : `${text.slice(0, secretsAt)}${CUSTOM_PARAMETERS_KEY}:"[redacted]"…`;
  return safe.length > RAW_EXCERPT_CHARS ? `${safe.slice(0, RAW_EXCERPT_CHARS)}…` : safe;
}
