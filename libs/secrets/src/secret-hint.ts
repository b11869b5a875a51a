/**
 * The hint shown beside a stored secret in listings ("…a1b2"), so an administrator can tell which
 * key is stored (and match it against the provider's dashboard, which shows the same tail) without
 * the API ever returning the value.
 */

/** Secrets shorter than this get no hint. */
export const SECRET_HINT_MIN_LENGTH = 16;
const HINT_LENGTH = 4;

/**
 * The last 4 characters of `value` when it is at least 16 characters long, else ''.
 *
 * Why the threshold: 4 characters of a 16+ character secret (API keys are 32-100+) leave at least
 * 12 unknown characters, still far beyond guessing; 4 characters of an 8-character password or PIN
 * would give away half of it. Why the END: key prefixes are fixed per provider ('sk-proj-',
 * 'whsec_'), so the start tells keys of one provider apart no better than nothing.
 * Characters are Unicode code points, so a hint never splits a surrogate pair into invalid text.
 */
export function secretHint(value: string): string {
  const characters = Array.from(value);
  return characters.length >= SECRET_HINT_MIN_LENGTH ? characters.slice(-HINT_LENGTH).join('') : '';
}
