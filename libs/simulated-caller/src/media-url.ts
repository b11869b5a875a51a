/**
 * The simulated caller talks to the server at its local address, but everything Twilio signs uses
 * the public URL (e.g. https://example.ngrok.app behind a tunnel). These helpers keep the two apart.
 */

/** base + path with exactly one slash between them. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * Maps the public `wss://PUBLIC/prefix/twilio/media` from the TwiML onto the local server:
 * `ws://127.0.0.1:3000/prefix/twilio/media`. A path prefix in PUBLIC_BASE_URL (a proxy mount point)
 * is swapped for the local server's own prefix.
 */
export function localMediaUrl(streamUrl: string, serverUrl: string, publicBaseUrl: string): string {
  const stream = new URL(streamUrl);
  const server = new URL(serverUrl);
  const publicPrefix = new URL(publicBaseUrl).pathname.replace(/\/+$/, '');
  let path = stream.pathname;
  if (publicPrefix !== '' && (path === publicPrefix || path.startsWith(`${publicPrefix}/`))) {
    path = path.slice(publicPrefix.length);
  }
  const scheme = server.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${server.host}${joinUrl(server.pathname, path)}${stream.search}`;
}
