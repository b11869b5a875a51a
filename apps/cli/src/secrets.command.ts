import { NestFactory } from '@nestjs/core';
import { loadAppConfig, type AppConfig } from '@switchboard/config';
import { generateSigningSecret } from '@switchboard/secrets';
import { DatabaseModule, OrganizationRepository, OrganizationSecretRepository, TwilioAccountRepository } from '@switchboard/persistence';
import { reseal, SECRET_NAME_PATTERN, type SecretKeyRing } from '@switchboard/secrets';
import { DEFAULT_ORGANIZATION_NAME } from '../../server/src/bootstrap/bootstrap.service';
import { loadSecretKeyRing } from '../../server/src/secrets/secret-key-ring.provider';
import { MAX_SECRET_VALUE_CHARS, SecretsService } from '../../server/src/secrets/secrets.service';
import { TWILIO_TOKEN_PURPOSE } from '../../server/src/twilio/accounts/twilio-account.service';

export const SECRETS_USAGE = `usage: npm run secrets -- rotate | set NAME | generate-signing NAME

rotate                 re-seals every organization secret and Twilio auth token that is not sealed
                       with the active key (SECRETS_ENCRYPTION_KEY) under it. Keep the old key in
                       SECRETS_PREVIOUS_KEYS until this has run, then remove it.
set NAME               stores the value read from standard input (so it stays out of shell history)
                       as secret NAME of the default organization (other organizations: POST /v1/secrets).
generate-signing NAME  stores a new Standard Webhooks signing secret (whsec_...) as NAME of the default
                       organization and prints it once, for the webhook tool's receiver.`;

/** Values re-sealed per query: bounded memory, whatever the number of secrets. */
const PAGE = 200;

export interface RotationResult {
  secrets: number;
  twilioTokens: number;
}

/**
 * Re-seals every stored value under the ring's active key. Each value is opened with the key it was
 * sealed with (from SECRETS_PREVIOUS_KEYS) and written back only if nobody changed it meanwhile, so
 * it can run while servers are up. A value the ring cannot open stops the rotation with its name
 * (never its value): the operator is missing a previous key.
 */
export async function rotateSecrets(ring: SecretKeyRing, secrets: OrganizationSecretRepository, accounts: TwilioAccountRepository): Promise<RotationResult> {
  const result: RotationResult = { secrets: 0, twilioTokens: 0 };
  for (;;) {
    const page = await secrets.findSealedWithOtherKey(ring.activeKeyId, PAGE);
    if (page.length === 0) break;
    // A value replaced meanwhile (PUT) is sealed with the active key already and drops out of the next page.
    for (const stored of page) {
      if (!ring.has(stored.keyId)) throw new Error(`secret "${stored.name}" of organization ${stored.organizationId} is sealed with key ${stored.keyId}, which is in neither SECRETS_ENCRYPTION_KEY nor SECRETS_PREVIOUS_KEYS`);
      if (await secrets.resealIfUnchanged(stored, reseal(ring, stored, stored.organizationId))) result.secrets += 1;
    }
  }
  for (;;) {
    const page = await accounts.findSealedWithOtherKey(ring.activeKeyId, PAGE);
    if (page.length === 0) break;
    for (const stored of page) {
      if (!ring.has(stored.keyId)) throw new Error(`the Twilio auth token of organization ${stored.organizationId} is sealed with key ${stored.keyId}, which is in neither SECRETS_ENCRYPTION_KEY nor SECRETS_PREVIOUS_KEYS`);
      if (await accounts.resealIfUnchanged(stored, reseal(ring, stored, stored.organizationId, TWILIO_TOKEN_PURPOSE))) result.twilioTokens += 1;
    }
  }
  return result;
}

type SecretsCommand = { kind: 'rotate' } | { kind: 'set'; name: string } | { kind: 'generate-signing'; name: string };

function parseSecretsCommand(argv: readonly string[]): SecretsCommand | undefined {
  if (argv.length === 1 && argv[0] === 'rotate') return { kind: 'rotate' };
  const [verb, name] = argv;
  if (argv.length === 2 && (verb === 'set' || verb === 'generate-signing') && name !== undefined && SECRET_NAME_PATTERN.test(name)) return { kind: verb, name };
  return undefined;
}

/** `npm run secrets -- rotate | set NAME | generate-signing NAME`. Exit codes: 0 done, 1 failed, 2 bad command line. */
export async function runSecretsCommand(
  argv: readonly string[],
  config: AppConfig,
  out: (line: string) => void,
  readValue: () => Promise<string> = readStandardInput,
): Promise<number> {
  const command = parseSecretsCommand(argv);
  if (!command) {
    out(SECRETS_USAGE);
    return 2;
  }
  const { ring } = loadSecretKeyRing(config, { log: out, warn: (line) => out(`warning: ${line}`) });
  const context = await NestFactory.createApplicationContext(
    DatabaseModule.forRoot({ databaseUrl: config.database.url, dataDir: config.database.dataDir, migrate: config.database.migrateOnStart }),
    { logger: ['error'] },
  );
  try {
    if (command.kind === 'rotate') {
      const result = await rotateSecrets(ring, context.get(OrganizationSecretRepository), context.get(TwilioAccountRepository));
      out(`re-sealed ${result.secrets} secret(s) and ${result.twilioTokens} Twilio auth token(s) with key ${ring.activeKeyId}; every stored value now uses it`);
      if (ring.previousKeyIds.length > 0) out('SECRETS_PREVIOUS_KEYS can now be removed.');
      return 0;
    }
    const value = command.kind === 'set' ? (await readValue()).replace(/\r?\n$/, '') : generateSigningSecret();
    if (value.length === 0 || value.length > MAX_SECRET_VALUE_CHARS) {
      out(`error: the value must be 1 to ${MAX_SECRET_VALUE_CHARS} characters`);
      return 1;
    }
    const organization = await context.get(OrganizationRepository).ensure(DEFAULT_ORGANIZATION_NAME);
    const secrets = new SecretsService(ring, context.get(OrganizationSecretRepository));
    const replaced = await secrets.replace(organization.id, command.name, value);
    if (!replaced) await secrets.create(organization.id, command.name, value);
    out(`secret "${command.name}" ${replaced ? 'replaced' : 'stored'} (sealed with key ${ring.activeKeyId})`);
    if (command.kind === 'generate-signing') out(`give this to the receiver to verify signatures (shown once): ${value}`);
    return 0;
  } finally {
    await context.close();
  }
}

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

if (require.main === module) {
  runSecretsCommand(process.argv.slice(2), loadAppConfig(), (line) => process.stdout.write(`${line}\n`)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
