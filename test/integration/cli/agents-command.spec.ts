import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAppConfig } from '@switchboard/config';
import { parseAgentConfig } from '@switchboard/agent-config';
import { createRepositories, createTestPrisma, testDatabaseUrl, uniqueE164 } from '../../support/database';
import { TEST_SECRETS_ENCRYPTION_KEY } from '../../support/test-server';
import { runAgentsCommand } from '../../../apps/cli/src/agents.command';
import { runSecretsCommand } from '../../../apps/cli/src/secrets.command';

describe('npm run agents (against the real database)', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);
  let dir: string;
  // A data folder of its own: the checkout's ./data (where `npm start` keeps its key file) is not the test's.
  const dataDir = mkdtempSync(join(tmpdir(), 'agents-cli-data-'));
  const config = loadAppConfig({ DATABASE_URL: testDatabaseUrl(), DATA_DIR: dataDir, MIGRATE_ON_START: 'false', LOG_LEVEL: 'silent', SECRETS_ENCRYPTION_KEY: TEST_SECRETS_ENCRYPTION_KEY });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-cli-'));
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await rm(dir, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates the example pipeline agent and routes a number to it', async () => {
    // The example's webhook tool signs with the default organization's vault secret "booking-signing".
    expect(await runSecretsCommand(['generate-signing', 'booking-signing'], config, () => undefined)).toBe(0);
    const lines: string[] = [];
    const number = uniqueE164();
    const code = await runAgentsCommand(['create', '--name', 'Front desk', '--engine', 'pipeline', '--config', 'examples/agents/front-desk.pipeline.json', '--number', number], config, (line) => lines.push(line));
    expect(code).toBe(0);
    const agentId = /agent ([0-9a-f-]{36})/.exec(lines[0]!)![1]!;
    const route = await repos.phoneNumbers.findRouteByE164(number);
    expect(route).toMatchObject({ agentId, configVersion: 1 });
    const stored = await repos.agents.configVersion(agentId, 1);
    // Stored with every default filled in, so a call never depends on code defaults changing later.
    expect(stored!.config).toEqual(parseAgentConfig(stored!.config));
    expect(stored!.config).toMatchObject({ tts: { provider: 'flite', voice: 'slt' }, interruptions: { minSpeechMs: 400 } });
  });

  it('refuses an invalid config, listing every problem with its path, and stores nothing', async () => {
    const path = join(dir, 'bad.json');
    await writeFile(path, JSON.stringify({ llm: { provider: 'openai', temperature: 7 }, tools: [{ type: 'transfer_call', destinations: [] }], maxDurationS: 0 }));
    const lines: string[] = [];
    const code = await runAgentsCommand(['create', '--name', 'Broken', '--engine', 'pipeline', '--config', path], config, (line) => lines.push(line));
    expect(code).toBe(1);
    expect(lines.join('\n')).toMatch(/llm\.temperature/);
    expect(lines.join('\n')).toMatch(/tools\.0\.destinations/);
    expect(lines.join('\n')).toMatch(/maxDurationS/);
  });

  it('exits 2 with the usage on a bad command line', async () => {
    const lines: string[] = [];
    expect(await runAgentsCommand(['create', '--name', 'x', '--engine', 'robot', '--config', 'a.json'], config, (line) => lines.push(line))).toBe(2);
    expect(lines[0]).toMatch(/--engine must be one of pipeline, realtime, echo/);
  });
});
