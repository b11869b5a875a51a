/** What a /v1 route answered: the status and the parsed JSON body (undefined when empty). */
export interface ApiAnswer {
  status: number;
  /** Whatever the route answered: specs read it as they need. */
  body: any;
}

export interface ApiRequestInit {
  /** Sent as a bearer token; null sends no authorization header. */
  apiKey: string | null;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Sent as JSON. */
  body?: unknown;
}

/**
 * Calls a route of a running server, in-process or built (`baseUrl` without a trailing slash), as an
 * API client would: the test server's `api()` and the built-server specs share it.
 */
export async function apiRequest(baseUrl: string, path: string, init: ApiRequestInit): Promise<ApiAnswer> {
  const headers: Record<string, string> = init.apiKey === null ? {} : { authorization: `Bearer ${init.apiKey}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, body: text.length > 0 ? JSON.parse(text) : undefined };
}
