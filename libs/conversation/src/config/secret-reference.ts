/**
 * Agent configs name secrets by environment variable (apiKeyEnv, signingSecretEnv) instead of
 * holding them. A config is tenant-controlled, so it may only name variables set aside for that
 * purpose: otherwise an agent could name DATABASE_URL or ADMIN_API_KEY as its "signing secret" or
 * "API key" and have the server send it to a URL of the tenant's choosing.
 */

export const SECRET_NAME_PREFIX = 'SWITCHBOARD_SECRET_';

/** Named exactly (not by prefix): the one server-wide key an agent may use without its own. */
const ALLOWED_EXACT_NAMES: ReadonlySet<string> = new Set(['OPENAI_API_KEY']);

export class SecretReferenceError extends Error {
  override readonly name = 'SecretReferenceError';
}

export function isAllowedSecretName(name: string): boolean {
  if (ALLOWED_EXACT_NAMES.has(name)) return true;
  return name.startsWith(SECRET_NAME_PREFIX) && /^[A-Z0-9_]+$/.test(name.slice(SECRET_NAME_PREFIX.length));
}

/** A name as it may appear in an error message: bounded, printable (it came from a tenant). */
function printable(name: string): string {
  const clean = name.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 80)}...` : clean;
}

/**
 * The value of the environment variable `name`. Throws a SecretReferenceError naming the variable
 * (never a value) when the name is not one an agent may use, or when it is unset or empty.
 */
export function resolveSecret(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!isAllowedSecretName(name)) {
    throw new SecretReferenceError(
      `secret reference "${printable(name)}" is not allowed: agents may only use environment variables named ` +
        `${SECRET_NAME_PREFIX}* (upper case, digits, underscores) or ${[...ALLOWED_EXACT_NAMES].join(', ')}`,
    );
  }
  const value = env[name];
  if (value === undefined || value.length === 0) {
    throw new SecretReferenceError(`environment variable ${name} is not set (it is named as a secret in the agent configuration)`);
  }
  return value;
}
