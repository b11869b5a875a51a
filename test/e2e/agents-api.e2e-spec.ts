import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { FakeTwilioRestServer } from '@switchboard/testing';
import { dialAgent } from '../support/conversation-agents';
import { createOtherOrganizationKey, createRepositories, createTestPrisma, uniqueE164 } from '../support/database';
import { storeSecret, storeSigningSecret } from '../support/secrets';
import { connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';

describe('agents and phone numbers API (e2e)', () => {
  let server: TestServer;
  let prisma: PrismaService;
  /** Twilio's REST API: the second organization's own account lives there (numbers bind only if Twilio lists them). */
  let twilio: FakeTwilioRestServer;
  /** An API key of a second organization, which must never see the admin organization's resources. */
  let otherOrgKey: string;
  let otherOrgAccount: TenantTwilioAccount;

  beforeAll(async () => {
    twilio = await FakeTwilioRestServer.start();
    server = await startTestServer({ TWILIO_API_BASE_URL: twilio.baseUrl, TWILIO_ACCOUNT_SID: twilio.accountSid, TWILIO_AUTH_TOKEN: twilio.authToken });
    prisma = createTestPrisma(2);
    const repositories = createRepositories(prisma);
    otherOrgKey = await createOtherOrganizationKey(repositories, 'agents-api-other');
    otherOrgAccount = await connectTwilioAccount(server, otherOrgKey, twilio);
  });
  afterAll(async () => {
    await server?.close();
    await twilio?.close();
    await prisma?.$disconnect();
  });

  const createAgent = (body: unknown, apiKey?: string) => server.api('/v1/agents', { method: 'POST', body, apiKey });

  it.each(['/v1/agents', '/v1/phone-numbers'])('answers 401 to %s without an API key', async (path) => {
    const list = await server.api(path, { apiKey: null });
    expect(list.status).toBe(401);
    expect(list.body.code).toBe('missing_api_key');
    const create = await server.api(path, { apiKey: null, method: 'POST', body: {} });
    expect(create.status).toBe(401);
  });

  it('creates, reads, lists, versions and soft-deletes an agent', async () => {
    const created = await createAgent({ name: 'Front desk', engine: 'pipeline', config: { systemPrompt: 'You are Acme.', llm: { temperature: 0.3 } } });
    expect(created.status).toBe(201);
    const agent = created.body;
    expect(agent).toMatchObject({ name: 'Front desk', engine: 'pipeline', version: 1 });
    // Stored with the defaults filled in, so the version says exactly what calls run with.
    expect(agent.config).toMatchObject({ systemPrompt: 'You are Acme.', language: 'en', llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0.3 }, tools: [] });

    const read = await server.api(`/v1/agents/${agent.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(agent);

    const listed = await server.api('/v1/agents?limit=100');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toContainEqual(expect.objectContaining({ id: agent.id, name: 'Front desk', version: 1 }));

    const updated = await server.api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: { name: 'Reception', config: { systemPrompt: 'You are Acme v2.' } } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: agent.id, name: 'Reception', version: 2, config: { systemPrompt: 'You are Acme v2.' } });
    // The whole config is replaced, not merged: the old temperature is gone.
    expect(updated.body.config.llm).not.toHaveProperty('temperature');

    const renamedOnly = await server.api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: { name: 'Reception desk' } });
    expect(renamedOnly.body).toMatchObject({ name: 'Reception desk', version: 2 });
    const sameConfig = await server.api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: { config: { systemPrompt: 'You are Acme v2.' } } });
    expect(sameConfig.body.version).toBe(2);

    const first = await server.api(`/v1/agents/${agent.id}/versions/1`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ agentId: agent.id, version: 1, config: agent.config });
    expect((await server.api(`/v1/agents/${agent.id}/versions/3`)).status).toBe(404);

    const deleted = await server.api(`/v1/agents/${agent.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect((await server.api(`/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await server.api(`/v1/agents/${agent.id}`, { method: 'DELETE' })).status).toBe(404);
    const afterDelete = await server.api('/v1/agents?limit=100');
    expect(afterDelete.body.data.map((entry: { id: string }) => entry.id)).not.toContain(agent.id);
  });

  it('answers the agent config as JSON Schema to any key (401 without one), made from the schema saves are checked with', async () => {
    const missing = await server.api('/v1/agents/config-schema', { apiKey: null });
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('missing_api_key');
    const readKey = await server.api('/v1/api-keys', { method: 'POST', body: { name: 'config schema reader', scopes: ['read'] } });
    expect(readKey.status).toBe(201);

    const answer = await server.api('/v1/agents/config-schema', { apiKey: readKey.body.key });
    expect(answer.status).toBe(200);
    const schema = answer.body;
    expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', additionalProperties: false });
    // The input side: every field has a default, so none is required, and the defaults are shown.
    expect(schema.required ?? []).toEqual([]);
    expect(schema.properties.llm.properties.temperature).toMatchObject({ type: 'number', minimum: 0, maximum: 2, description: expect.any(String) });
    expect(schema.properties.turn.properties.minSilenceMs).toMatchObject({ type: 'integer', minimum: 100, maximum: 5000, default: 500 });
    expect(schema.properties.tts.properties.provider.enum).toEqual(['flite', 'openai', 'kokoro', 'piper']);
    expect(schema.properties.tools.items.oneOf.map((variant: { properties: { type: { const: string } } }) => variant.properties.type.const)).toEqual(['end_call', 'transfer_call', 'webhook']);
    expect(schema.properties.realtime['x-engines']).toEqual(['realtime']);
    expect(schema.properties.stt['x-engines']).toEqual(['pipeline']);

    // A stock validator reads it: a stored config (defaults filled in) passes, values the server refuses fail.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const created = await createAgent({ name: `schema-${randomUUID()}`, engine: 'pipeline', config: { llm: { temperature: 0.4 }, tools: [{ type: 'end_call' }] } });
    expect(created.status).toBe(201);
    expect(validate(created.body.config)).toBe(true);
    expect(validate({ llm: { temperature: 3 } })).toBe(false);
    expect(validate({ colour: 'blue' })).toBe(false);
    expect(validate({ tools: [{ type: 'transfer_call', destinations: [] }] })).toBe(false);

    // Not taken for an agent id, and the same document each time.
    expect((await server.api('/v1/agents/config-schema')).body).toEqual(schema);
  });

  it('pages through agents with a cursor', async () => {
    const key = await otherOrgOnlyKey();
    for (const name of ['a', 'b', 'c']) expect((await createAgent({ name, engine: 'echo' }, key)).status).toBe(201);
    const first = await server.api('/v1/agents?limit=2', { apiKey: key });
    expect(first.body.data).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await server.api(`/v1/agents?limit=2&cursor=${first.body.nextCursor}`, { apiKey: key });
    expect(second.body).toEqual({ data: [expect.any(Object)], nextCursor: null });
    // Agents created in the same millisecond are ordered by id, so only the union is fixed.
    const names = [...first.body.data, ...second.body.data].map((agent: { name: string }) => agent.name);
    expect(names.sort()).toEqual(['a', 'b', 'c']);
    expect((await server.api('/v1/agents?cursor=bm90LWEtY3Vyc29y', { apiKey: key })).status).toBe(400);
    expect((await server.api('/v1/agents?limit=101', { apiKey: key })).status).toBe(400);
  });

  it('answers 400 listing every problem of a bad config, and stores nothing', async () => {
    const name = `bad-${randomUUID()}`;
    const response = await createAgent({
      name,
      engine: 'pipeline',
      config: { llm: { temperature: 5 }, tools: [{ type: 'webhook', name: 'lookup', description: 'x', url: 'ftp://nope' }], colour: 'blue' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'invalid_agent_config' });
    const paths = response.body.problems.map((problem: { path: string }) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(['llm.temperature', 'tools.0.url', 'tools.0.signingSecret']));
    expect(response.body.problems.length).toBeGreaterThanOrEqual(4);
    for (const problem of response.body.problems) expect(problem.message).toEqual(expect.any(String));
    const listed = await server.api('/v1/agents?limit=100');
    expect(listed.body.data.map((agent: { name: string }) => agent.name)).not.toContain(name);

    const agent = (await createAgent({ name: 'good', engine: 'echo' })).body;
    const badUpdate = await server.api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: { name: 'renamed', config: { maxDurationS: 0 } } });
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.problems).toEqual([{ path: 'maxDurationS', message: expect.any(String) }]);
    // Nothing of the rejected request was applied.
    expect((await server.api(`/v1/agents/${agent.id}`)).body).toMatchObject({ name: 'good', version: 1 });
  });

  it('saves secret references its vault cannot answer yet as not ready, refuses what can never work (not a signing secret, an environment name), and reads ready once stored', async () => {
    // A fresh organization: its vault starts empty. The admin organization holding a secret of the
    // same name does not help: references are resolved in the config's own organization only.
    const key = await otherOrgOnlyKey();
    const signingName = 'agents-api-vault-lookup-signing';
    const llmKeyName = 'agents-api-vault-llm-key';
    await storeSigningSecret(server, signingName);
    await storeSecret(server, llmKeyName, 'sk-agents-api-admin-organization-key');
    const config = {
      stt: { baseUrl: 'http://127.0.0.1:9/v1' },
      llm: { baseUrl: 'http://127.0.0.1:9/v1', apiKeySecret: llmKeyName },
      tools: [{ type: 'webhook', name: 'lookup', description: 'x', url: 'http://127.0.0.1:9/lookup', signingSecret: signingName }],
    };
    const name = `vault-${randomUUID()}`;

    // Secrets are often stored after the agent: it is saved, and reads not ready until they are.
    const missing = await createAgent({ name, engine: 'pipeline', config }, key);
    expect(missing.status).toBe(201);
    expect(missing.body.readiness).toEqual({
      ready: false,
      problems: [
        { path: 'llm.apiKeySecret', message: expect.stringContaining(llmKeyName) },
        { path: 'tools.0.signingSecret', message: expect.stringContaining(signingName) },
      ],
    });
    expect((await server.api(`/v1/agents/${missing.body.id}`, { apiKey: key })).body.readiness.problems).toHaveLength(2);
    expect((await server.api(`/v1/agents/${missing.body.id}`, { method: 'DELETE', apiKey: key })).status).toBe(204);

    // A signing secret must be a Standard Webhooks secret (whsec_...), not any stored value.
    await storeSecret(server, llmKeyName, 'sk-agents-api-vault-key', key);
    await storeSecret(server, signingName, 'not-a-whsec-secret', key);
    const notSigning = await createAgent({ name, engine: 'pipeline', config }, key);
    expect(notSigning.status).toBe(400);
    expect(notSigning.body.problems).toEqual([{ path: 'tools.0.signingSecret', message: expect.stringContaining('Standard Webhooks') }]);

    // Environment variables are no longer a place for tenant secrets: only the operator's OPENAI_API_KEY, for OpenAI itself.
    // Every problem is listed at once: the shape's, and the signing secret that is still not a whsec_ value.
    const stillNotSigning = { path: 'tools.0.signingSecret', message: expect.stringContaining('Standard Webhooks') };
    const envReference = await createAgent({ name, engine: 'pipeline', config: { ...config, llm: { apiKeyEnv: 'SWITCHBOARD_SECRET_AGENTS_API' } } }, key);
    expect(envReference.status).toBe(400);
    expect(envReference.body.problems).toEqual([{ path: 'llm.apiKeyEnv', message: expect.any(String) }, stillNotSigning]);
    const operatorKeyElsewhere = await createAgent({ name, engine: 'pipeline', config: { ...config, llm: { baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'OPENAI_API_KEY' } } }, key);
    expect(operatorKeyElsewhere.status).toBe(400);
    expect(operatorKeyElsewhere.body.problems).toEqual([{ path: 'llm.apiKeyEnv', message: expect.any(String) }, stillNotSigning]);
    expect((await server.api('/v1/agents?limit=100', { apiKey: key })).body.data).toEqual([]);

    const signingValue = await storeSigningSecret(server, signingName, key);
    const created = await createAgent({ name, engine: 'pipeline', config }, key);
    expect(created.status).toBe(201);
    expect(created.body.config).toMatchObject({ llm: { apiKeySecret: llmKeyName }, tools: [{ signingSecret: signingName }] });
    expect(created.body.readiness).toEqual({ ready: true, problems: [] });
    // The config names the secrets; their values never appear in it.
    expect(JSON.stringify(created.body)).not.toContain(signingValue);
    expect(JSON.stringify(created.body)).not.toContain('sk-agents-api-vault-key');
  });

  it('answers 404 for another organization\'s agent everywhere', async () => {
    const agent = (await createAgent({ name: 'private', engine: 'echo' })).body;
    const asOther = (path: string, init: { method?: 'GET' | 'PATCH' | 'DELETE'; body?: unknown } = {}) => server.api(path, { ...init, apiKey: otherOrgKey });
    for (const response of [
      await asOther(`/v1/agents/${agent.id}`),
      await asOther(`/v1/agents/${agent.id}/versions/1`),
      await asOther(`/v1/agents/${agent.id}`, { method: 'PATCH', body: { name: 'stolen' } }),
      await asOther(`/v1/agents/${agent.id}`, { method: 'DELETE' }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('agent_not_found');
    }
    const listed = await asOther('/v1/agents?limit=100');
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).not.toContain(agent.id);
    // Binding another organization's agent is refused as a bad reference.
    const bind = await server.api('/v1/phone-numbers', { apiKey: otherOrgKey, method: 'POST', body: { e164: uniqueE164(), agentId: agent.id } });
    expect(bind.status).toBe(400);
    expect(bind.body.code).toBe('agent_not_found');
    // Still intact for its owner.
    expect((await server.api(`/v1/agents/${agent.id}`)).body).toMatchObject({ name: 'private', version: 1 });
  });

  it('binds phone numbers, keeps them unique per deployment, and unbinds them when the agent is deleted', async () => {
    const first = (await createAgent({ name: 'first', engine: 'echo' })).body;
    const second = (await createAgent({ name: 'second', engine: 'echo' })).body;
    const e164 = uniqueE164();

    const created = await server.api('/v1/phone-numbers', { method: 'POST', body: { e164, agentId: first.id } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ e164, agentId: first.id });
    const numberId = created.body.id;

    // Another organization can bind only numbers of its own Twilio account...
    const notInAccount = await server.api('/v1/phone-numbers', { apiKey: otherOrgKey, method: 'POST', body: { e164, agentId: null } });
    expect(notInAccount.status).toBe(400);
    expect(notInAccount.body.code).toBe('number_not_in_twilio_account');
    // ...and even where its account lists the number, one bound here stays with its organization.
    twilio.addIncomingNumber(otherOrgAccount.accountSid, e164);
    const taken = await server.api('/v1/phone-numbers', { apiKey: otherOrgKey, method: 'POST', body: { e164, agentId: null } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('phone_number_taken');
    expect((await server.api(`/v1/phone-numbers/${numberId}`, { apiKey: otherOrgKey, method: 'PATCH', body: { agentId: null } })).status).toBe(404);
    expect((await server.api(`/v1/phone-numbers/${numberId}`, { apiKey: otherOrgKey, method: 'DELETE' })).status).toBe(404);

    const notE164 = await server.api('/v1/phone-numbers', { method: 'POST', body: { e164: '555-0100', agentId: null } });
    expect(notE164.status).toBe(400);
    expect(notE164.body.details).toEqual([expect.objectContaining({ field: 'e164' })]);
    const unknown = await server.api(`/v1/phone-numbers/${numberId}`, { method: 'PATCH', body: { agentId: randomUUID() } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('agent_not_found');

    const rebound = await server.api(`/v1/phone-numbers/${numberId}`, { method: 'PATCH', body: { agentId: second.id } });
    expect(rebound.status).toBe(200);
    expect(rebound.body).toMatchObject({ id: numberId, e164, agentId: second.id });
    const listed = await server.api('/v1/phone-numbers?limit=100');
    expect(listed.body.data).toContainEqual(expect.objectContaining({ id: numberId, agentId: second.id }));
    expect((await server.api('/v1/phone-numbers?limit=100', { apiKey: otherOrgKey })).body.data.map((entry: { e164: string }) => entry.e164)).not.toContain(e164);

    expect((await server.api(`/v1/agents/${second.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await server.api(`/v1/phone-numbers/${numberId}`)).body.agentId).toBeNull();

    expect((await server.api(`/v1/phone-numbers/${numberId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await server.api(`/v1/phone-numbers/${numberId}`)).status).toBe(404);
    // Released numbers can be registered by another organization.
    expect((await server.api('/v1/phone-numbers', { apiKey: otherOrgKey, method: 'POST', body: { e164, agentId: null } })).status).toBe(201);
  });

  it('routes a call to a number created through the API to its agent', async () => {
    const agent = (await createAgent({ name: 'echo line', engine: 'echo' })).body;
    await server.api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: { config: { firstMessage: null, language: 'de' } } });
    const e164 = uniqueE164();
    expect((await server.api('/v1/phone-numbers', { method: 'POST', body: { e164, agentId: agent.id } })).status).toBe(201);

    const { call, callId } = await dialAgent(server, e164);
    try {
      const detail = await eventually(() => server.api(`/v1/calls/${callId}`), (response) => response.status === 200);
      expect(detail.body).toMatchObject({ id: callId, agentId: agent.id, agentConfigVersion: 2 });
    } finally {
      await call.hangup();
    }
  }, 30_000);

  /** A key of a fresh organization, for assertions about a whole (otherwise empty) list. */
  async function otherOrgOnlyKey(): Promise<string> {
    return createOtherOrganizationKey(createRepositories(prisma), 'agents-api-paging');
  }
});
