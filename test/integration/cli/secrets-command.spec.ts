import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAppConfig } from '@switchboard/config';
import { generateSigningSecret, isStandardWebhooksSecret } from '@switchboard/secrets';
import { open, seal, SecretKeyRing } from '@switchboard/secrets';
import { OrganizationSecretRepository } from '../../../libs/persistence/src/repositories/organization-secret.repository';
import { TwilioAccountRepository } from '../../../libs/persistence/src/repositories/twilio-account.repository';
import { rotateSecrets, runSecretsCommand } from '../../../apps/cli/src/secrets.command';
import { SecretsService } from '../../../apps/server/src/secrets/secrets.service';
import { TWILIO_TOKEN_PURPOSE } from '../../../apps/server/src/twilio/accounts/twilio-account.service';
import { applyMigrations } from '../../../libs/persistence/src/migrations';
import type { PrismaService } from '../../../libs/persistence/src/prisma.service';
import { createRepositories, createScratchDatabase, createTestOrganization, createTestPrisma, type ScratchDatabase, type TestRepositories } from '../../support/database';

/**
 * Key rotation against a real database: a new key becomes active with the old one kept as a
 * previous key, `npm run secrets -- rotate` re-seals every value (vault secrets and Twilio auth
 * tokens) under the new key, and afterwards the new key alone opens everything. A database of its
 * own: rotation re-seals EVERY value it finds, and the shared one holds other tests' secrets.
 */
describe('npm run secrets (against a real database of its own)', () => {
  let database: ScratchDatabase;
  let prisma: PrismaService;
  let repos: TestRepositories;
  let secrets: OrganizationSecretRepository;
  let accounts: TwilioAccountRepository;
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);

  beforeAll(async () => {
    database = await createScratchDatabase('secrets_cli');
    await applyMigrations(database.url);
    prisma = createTestPrisma(2, database.url);
    repos = createRepositories(prisma);
    secrets = new OrganizationSecretRepository(prisma);
    accounts = new TwilioAccountRepository(prisma);
  }, 60_000);

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  it('rotate re-seals every value under the active key; the old key can then be removed', async () => {
    const ringA = new SecretKeyRing({ active: keyA });
    const [first, second] = [await createTestOrganization(repos, 'rotate'), await createTestOrganization(repos, 'rotate')];
    const vaultA = new SecretsService(ringA, secrets);
    await vaultA.create(first.id, 'engine-key', 'sk-value-of-the-first-organization');
    await vaultA.create(second.id, 'engine-key', 'sk-value-of-the-second-organization');
    const accountSid = `AC${randomBytes(16).toString('hex')}`;
    await accounts.upsert(second.id, accountSid, seal(ringA, 'twilio-token-of-the-second', second.id, TWILIO_TOKEN_PURPOSE));

    const ringB = new SecretKeyRing({ active: keyB, previous: [keyA] });
    const result = await rotateSecrets(ringB, secrets, accounts);
    expect(result.secrets).toBeGreaterThanOrEqual(2);
    expect(result.twilioTokens).toBeGreaterThanOrEqual(1);

    const onlyB = new SecretKeyRing({ active: keyB });
    const vaultB = new SecretsService(onlyB, secrets);
    await expect(vaultB.resolve(first.id, 'engine-key')).resolves.toEqual({ value: 'sk-value-of-the-first-organization', version: 1 });
    await expect(vaultB.resolve(second.id, 'engine-key')).resolves.toEqual({ value: 'sk-value-of-the-second-organization', version: 1 });
    expect(open(onlyB, (await accounts.findByOrganization(second.id))!, second.id, TWILIO_TOKEN_PURPOSE)).toBe('twilio-token-of-the-second');
    // The old key no longer opens what was re-sealed; a second run has nothing left to do for these.
    await expect(vaultA.resolve(first.id, 'engine-key')).rejects.toThrow(/cannot be opened: unknown key id/);
    const again = await rotateSecrets(ringB, secrets, accounts);
    expect(await prisma.organizationSecret.count({ where: { organizationId: { in: [first.id, second.id] }, keyId: { not: ringB.activeKeyId } } })).toBe(0);
    expect(again.secrets + again.twilioTokens).toBe(0);
  });

  it('stops with the name (never the value) of a secret sealed with a key the server does not have', async () => {
    const organization = await createTestOrganization(repos, 'rotate-missing');
    const lost = new SecretKeyRing({ active: randomBytes(32) });
    await new SecretsService(lost, secrets).create(organization.id, 'orphan', 'value-sealed-with-a-lost-key');
    const error = (await rotateSecrets(new SecretKeyRing({ active: keyB }), secrets, accounts).catch((thrown: unknown) => thrown)) as Error;
    expect(error.message).toMatch(new RegExp(`secret "orphan" of organization ${organization.id} is sealed with key ${lost.activeKeyId}`));
    expect(error.message).not.toContain('value-sealed-with-a-lost-key');
    await prisma.organizationSecret.deleteMany({ where: { organizationId: organization.id } });
  });

  it('set stores a value read from standard input, and generate-signing a Standard Webhooks secret shown once', async () => {
    // A data folder of its own: the checkout's ./data (where `npm start` keeps its key file) is not the test's.
    const dataDir = mkdtempSync(join(tmpdir(), 'secrets-cli-data-'));
    const config = loadAppConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, MIGRATE_ON_START: 'false', LOG_LEVEL: 'silent', SECRETS_ENCRYPTION_KEY: keyB.toString('base64') });
    const lines: string[] = [];
    expect(await runSecretsCommand(['set', 'cli-set'], config, (line) => lines.push(line), async () => 'value-from-stdin\n')).toBe(0);
    expect(lines.join('\n')).not.toContain('value-from-stdin');
    expect(await runSecretsCommand(['generate-signing', 'cli-signing'], config, (line) => lines.push(line))).toBe(0);
    const shown = /shown once\): (whsec_\S+)/.exec(lines.join('\n'))![1]!;
    expect(isStandardWebhooksSecret(shown)).toBe(true);
    const defaultOrganization = await prisma.organization.findUniqueOrThrow({ where: { name: 'Default organization' } });
    const vault = new SecretsService(new SecretKeyRing({ active: keyB }), secrets);
    await expect(vault.resolve(defaultOrganization.id, 'cli-set')).resolves.toMatchObject({ value: 'value-from-stdin' });
    await expect(vault.resolve(defaultOrganization.id, 'cli-signing')).resolves.toMatchObject({ value: shown });
    expect(await runSecretsCommand(['rotate', 'extra'], config, () => undefined)).toBe(2);
    expect(generateSigningSecret()).not.toBe(shown);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
