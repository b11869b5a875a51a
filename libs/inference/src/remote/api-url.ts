/**
 * Joins an OpenAI-compatible base URL and an API path. Providers document their base URL both with
 * and without the version segment (`https://api.openai.com` vs `https://api.openai.com/v1`,
 * `https://api.groq.com/openai/v1`, `http://localhost:11434/v1`), so a trailing `/v1` on the base
 * is not doubled when the path starts with `/v1/`.
 */
export function resolveApiUrl(baseUrl: string, apiPath: `/v1/${string}`): string {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new Error(`invalid base URL "${baseUrl}": expected an absolute http(s) URL such as https://api.openai.com/v1`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`invalid base URL "${baseUrl}": only http and https are supported`);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new Error(`invalid base URL "${baseUrl}": must not carry a query string or fragment`);
  }
  const basePath = parsed.pathname.replace(/\/+$/, '');
  const path = basePath.endsWith('/v1') ? apiPath.slice('/v1'.length) : apiPath;
  return `${parsed.origin}${basePath}${path}`;
}

/** The base URL in one canonical spelling, so `.../v1` and `.../v1/` share a circuit breaker. */
export function canonicalBaseUrl(baseUrl: string): string {
  return resolveApiUrl(baseUrl, '/v1/').replace(/\/$/, '');
}
