const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids arrive from URLs and Twilio custom parameters. Postgres rejects a malformed uuid with
 * an error, but to a caller "no such id" is the right answer, so repositories check first.
 */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
