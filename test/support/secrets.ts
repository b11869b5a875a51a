import { generateSigningSecret } from '@switchboard/secrets';
import type { TestServer } from './test-server';

/**
 * Stores `value` as the organization's secret `name` through the API (creating or replacing it: every
 * e2e server shares the default organization, so a spec file must not trip over another's names).
 */
export async function storeSecret(server: TestServer, name: string, value: string, apiKey?: string): Promise<void> {
  const created = await server.api('/v1/secrets', { apiKey, method: 'POST', body: { name, value } });
  if (created.status === 201) return;
  if (created.status !== 409) throw new Error(`storing secret ${name} failed: ${created.status} ${JSON.stringify(created.body)}`);
  const replaced = await server.api(`/v1/secrets/${name}`, { apiKey, method: 'PUT', body: { value } });
  if (replaced.status !== 200) throw new Error(`replacing secret ${name} failed: ${replaced.status} ${JSON.stringify(replaced.body)}`);
}

/** A fresh Standard Webhooks signing secret (for webhook tools) stored as `name`; returns its value. */
export async function storeSigningSecret(server: TestServer, name: string, apiKey?: string): Promise<string> {
  const value = generateSigningSecret();
  await storeSecret(server, name, value, apiKey);
  return value;
}
