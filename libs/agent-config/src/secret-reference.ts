/**
 * Where an agent's credentials come from. An agent config is tenant data, and the server sends an
 * engine's key to the URL the config names, so:
 *  - an organization's own keys and signing secrets live in its vault and are referenced by name
 *    (`apiKeySecret`, `signingSecret`); they can only ever be that organization's;
 *  - the operator's provider key (an environment variable such as OPENAI_API_KEY, named with
 *    `apiKeyEnv`) is operator data: it is only sent to that provider's own endpoint. A config that
 *    pairs it with any other baseUrl/url is refused, or the operator's key would go to a server of
 *    the tenant's choosing.
 */

/** The environment keys a config may name, each only for its provider's own endpoint. */
export const OPERATOR_KEY_ENV_NAMES = ['OPENAI_API_KEY'] as const;
export type OperatorKeyEnvName = (typeof OPERATOR_KEY_ENV_NAMES)[number];

/** OpenAI's own endpoints: the only places the operator's OPENAI_API_KEY is sent. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const OPENAI_OWN_ORIGINS: ReadonlySet<string> = new Set(['https://api.openai.com', 'wss://api.openai.com']);

/** How to move a secret from the environment into the vault; said wherever an old reference is refused. */
export const VAULT_MIGRATION_HINT = 'store the value with POST /v1/secrets {"name", "value"} and reference it by name (apiKeySecret / signingSecret)';

export class SecretReferenceError extends Error {
  override readonly name = 'SecretReferenceError';
}

/**
 * Why the operator's key may not be used with `url` (the engine's configured baseUrl / realtime url),
 * or undefined when it may: no url (the provider's default), or a url on the provider's own origin.
 */
export function operatorKeyEndpointProblem(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let origin: string;
  try {
    const parsed = new URL(url);
    origin = `${parsed.protocol}//${parsed.host}`;
    if (parsed.username !== '' || parsed.password !== '') origin = '';
  } catch {
    origin = '';
  }
  if (OPENAI_OWN_ORIGINS.has(origin)) return undefined;
  return `the operator's key (apiKeyEnv) is only sent to the provider's own endpoint (${OPENAI_DEFAULT_BASE_URL}), not to ${printable(url)}: ${VAULT_MIGRATION_HINT}`;
}

/**
 * The operator key named by `apiKeyEnv`, for an engine that talks to `url`. Throws a
 * SecretReferenceError naming the variable (never a value) when the name is not an operator key, the
 * url is not the provider's own, or the variable is unset.
 */
export function resolveOperatorKey(name: string, url: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (!(OPERATOR_KEY_ENV_NAMES as readonly string[]).includes(name)) {
    throw new SecretReferenceError(`apiKeyEnv "${printable(name)}" is not allowed: only ${OPERATOR_KEY_ENV_NAMES.join(', ')}; ${VAULT_MIGRATION_HINT}`);
  }
  const problem = operatorKeyEndpointProblem(url);
  if (problem !== undefined) throw new SecretReferenceError(problem);
  const value = env[name];
  if (value === undefined || value.length === 0) {
    throw new SecretReferenceError(`the operator has not set ${name} on this server (the agent config names it as apiKeyEnv)`);
  }
  return value;
}

/** A name or URL as it may appear in an error message: bounded, printable (it came from a tenant). */
function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 80)}...` : clean;
}
