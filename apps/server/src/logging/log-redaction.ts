/**
 * The one list of what never reaches the log, and the functions every logging path uses to apply it.
 * A key sent in the wrong place (a query, an X-API-Key header) is refused with 401, but the request
 * line would still carry it; a signed recording link replays the recording to whoever reads the log.
 */

/** What a redacted value is replaced by, everywhere. */
export const REDACTION_MARKER = '[redacted]';

/** Request and response headers whose values are credentials (names as Node gives them: lower case). */
export const REDACTED_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'x-api-key', 'cookie', 'set-cookie', 'x-twilio-signature'];

/** Query parameters whose values are replaced by the marker, whatever their case (`API_KEY=` too). */
export const REDACTED_QUERY_PARAMETERS: readonly string[] = ['api_key', 'apikey', 'access_token', 'token', 'key', 'signature', 'sig'];

/**
 * Paths whose whole query string is the credential, dropped rather than redacted parameter by
 * parameter: signed recording links (`/recordings/<callId>.wav?expires=...&signature=...`), so the
 * log keeps which recording was fetched but never a link that plays it.
 */
const QUERYLESS_PATH = /\/recordings\/[^/?#\s"'<>]+\.wav$/i;

const redactedHeaders = new Set(REDACTED_HEADERS);
const redactedParameters = new Set(REDACTED_QUERY_PARAMETERS);

// A query string inside a URL or free text: from `?` to the first character no URL carries unescaped.
const QUERY_STRING = /\?([^\s"'<>#`]*)/g;
// The password of `scheme://user:password@host`.
const USERINFO_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^/\s@:"'<>]*:)[^/\s@"'<>]*@/gi;

function parameterName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    // Not valid percent-encoding: compare it as written.
    return raw.toLowerCase();
  }
}

function redactQueryString(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return equals !== -1 && redactedParameters.has(parameterName(name)) ? `${name}=${REDACTION_MARKER}` : pair;
    })
    .join('&');
}

/**
 * A URL (absolute or a request's path and query), or any text that contains URLs (an error's
 * message or stack), with the listed query values replaced by the marker, a recording link's query
 * dropped and a URL's password replaced. Never throws; text without a secret comes back unchanged.
 */
export function redactUrls(text: string): string {
  if (!text.includes('?') && !text.includes('@')) return text;
  return text
    .replace(USERINFO_PASSWORD, `$1${REDACTION_MARKER}@`)
    .replace(QUERY_STRING, (_match: string, query: string, offset: number, input: string) =>
      // Only the path's end is looked at (a call id is 36 characters): a long text costs no more per query.
      QUERYLESS_PATH.test(input.slice(Math.max(0, offset - 256), offset)) ? '' : `?${redactQueryString(query)}`,
    );
}

/** A copy of `headers` with the listed ones' values replaced by the marker (any case of the name). */
export function redactHeaders<T extends Record<string, unknown>>(headers: T): T {
  const copy: Record<string, unknown> = { ...headers };
  for (const name of Object.keys(copy)) {
    if (redactedHeaders.has(name.toLowerCase())) copy[name] = REDACTION_MARKER;
  }
  return copy as T;
}

/** A parsed query (Express's `req.query`) with the listed parameters' values replaced, or nothing for a recording link. */
export function redactQuery(query: unknown, path: string): unknown {
  if (query === null || typeof query !== 'object') return query;
  if (QUERYLESS_PATH.test(path.split('?')[0] ?? '')) return {};
  const copy: Record<string, unknown> = { ...(query as Record<string, unknown>) };
  for (const name of Object.keys(copy)) {
    if (redactedParameters.has(name.toLowerCase())) copy[name] = REDACTION_MARKER;
  }
  return copy;
}

interface SerializedRequest {
  url?: unknown;
  query?: unknown;
  headers?: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * pino-http's request serializer, over pino's own: the same fields, with the URL, the parsed query
 * and the headers redacted. Returns a new object: pino's `headers` is the live request's.
 */
export function redactRequest(request: SerializedRequest): SerializedRequest {
  const url = typeof request.url === 'string' ? request.url : '';
  return {
    id: request['id'],
    method: request['method'],
    url: typeof request.url === 'string' ? redactUrls(request.url) : request.url,
    query: redactQuery(request.query, url),
    params: request['params'],
    headers: request.headers && typeof request.headers === 'object' ? redactHeaders(request.headers) : request.headers,
    remoteAddress: request['remoteAddress'],
    remotePort: request['remotePort'],
  };
}

/** pino-http's response serializer, over pino's own: `set-cookie` (and the rest of the list) redacted. */
export function redactResponse(response: { headers?: Record<string, unknown>; [field: string]: unknown }): Record<string, unknown> {
  return response.headers && typeof response.headers === 'object' ? { ...response, headers: redactHeaders(response.headers) } : response;
}

/** The string fields of a log line's object (an error's message and stack, a `url`) with redactUrls applied; other fields as they are. */
export function redactStringFields<T extends Record<string, unknown>>(fields: T): T {
  let copy: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue;
    const redacted = redactUrls(value);
    if (redacted === value) continue;
    copy ??= { ...fields };
    copy[name] = redacted;
  }
  return (copy ?? fields) as T;
}

/** pino's error serializer's output (message and stack include the causes') with redactUrls applied to its string fields. */
export function redactError(error: unknown): unknown {
  if (typeof error === 'string') return redactUrls(error);
  return error !== null && typeof error === 'object' ? redactStringFields(error as Record<string, unknown>) : error;
}
