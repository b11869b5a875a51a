export const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';

function trimSlashes(value: string): string {
  return value.replace(/\/+$/, '');
}

/** `<endpoint>/<repo>/resolve/<revision>/<path>`: the Hub's download URL for one file at one revision. */
export function hubFileUrl(endpoint: string, repo: string, revision: string, path: string): string {
  const encodedPath = path.split('/').map(encodeURIComponent).join('/');
  return `${trimSlashes(endpoint)}/${repo}/resolve/${encodeURIComponent(revision)}/${encodedPath}`;
}

/** Where a person can browse the repository at the pinned revision. */
export function hubTreeUrl(endpoint: string, repo: string, revision: string): string {
  return `${trimSlashes(endpoint)}/${repo}/tree/${encodeURIComponent(revision)}`;
}

/** host[:port] of the endpoint, for messages ("cannot reach huggingface.co"). */
export function endpointHost(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return endpoint;
  }
}
