import { readFile } from 'node:fs/promises';
import { BadRequestException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadAppConfig, type AppConfig } from '@switchboard/config';
import { AgentConfigError, parseAgentConfig } from '@switchboard/agent-config';
import { AgentRepository, DatabaseModule, OrganizationRepository, OrganizationSecretRepository, PhoneNumberRepository } from '@switchboard/persistence';
import { AgentConfigValidator, type ConfigProblem } from '../../server/src/agents-api/agent-config-validation';
import { DEFAULT_ORGANIZATION_NAME } from '../../server/src/bootstrap/bootstrap.service';
import { TenantOutbound } from '../../server/src/outbound/outbound-guard.provider';
import { loadSecretKeyRing } from '../../server/src/secrets/secret-key-ring.provider';
import { SecretsService } from '../../server/src/secrets/secrets.service';
import { runAgentTestCommand } from './agents/agent-test-command';
import { AGENTS_USAGE, AgentsUsageError, parseAgentsCommand, type AgentsCommand } from './agents/agents-options';

/**
 * `npm run agents -- create|update ...`: stores an agent config (validated, versioned) and binds a
 * phone number to it, in the default organization. The platform REST API offers the same per
 * organization; this is the operator's way in without an HTTP client, and it checks a config exactly
 * as the API does (secret references, URLs, tool schemas).
 * `test` runs a scenario suite on the running server (agents/agent-test-command.ts).
 * Exit codes: 0 done (every scenario passed), 1 failed (invalid config, database, a failed scenario), 2 bad command line.
 */
export async function runAgentsCommand(argv: readonly string[], config: AppConfig, out: (line: string) => void): Promise<number> {
  let command: AgentsCommand;
  try {
    command = parseAgentsCommand(argv);
  } catch (error) {
    if (!(error instanceof AgentsUsageError)) throw error;
    out(`error: ${error.message}\n\n${AGENTS_USAGE}`);
    return 2;
  }
  // Scenario tests run on the server (its web-call edge, the agent's engines): an API client.
  if (command.kind === 'test') return runAgentTestCommand(command, out);
  let agentConfig;
  try {
    agentConfig = parseAgentConfig(JSON.parse(await readFile(command.configPath, 'utf8')));
  } catch (error) {
    if (error instanceof AgentConfigError) out(`error: ${command.configPath} is not a valid agent config:\n${error.problems.map((problem) => `  - ${problem.path || '(root)'}: ${problem.message}`).join('\n')}`);
    else out(`error: cannot read ${command.configPath}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }

  const context = await NestFactory.createApplicationContext(
    DatabaseModule.forRoot({ databaseUrl: config.database.url, dataDir: config.database.dataDir, migrate: config.database.migrateOnStart }),
    { logger: ['error'] },
  );
  const outbound = new TenantOutbound(config);
  try {
    const organization = await context.get(OrganizationRepository).ensure(DEFAULT_ORGANIZATION_NAME);
    const secrets = new SecretsService(loadSecretKeyRing(config, { log: () => undefined, warn: (line) => out(`warning: ${line}`) }).ring, context.get(OrganizationSecretRepository));
    try {
      agentConfig = await new AgentConfigValidator(secrets, outbound).validate(organization.id, agentConfig);
    } catch (error) {
      if (!(error instanceof BadRequestException)) throw error;
      const { problems } = error.getResponse() as { problems: ConfigProblem[] };
      out(`error: ${command.configPath} is not a valid agent config:\n${problems.map((problem) => `  - ${problem.path || '(root)'}: ${problem.message}`).join('\n')}`);
      return 1;
    }
    const agents = context.get(AgentRepository);
    if (command.kind === 'update') {
      const version = await agents.updateConfig(organization.id, command.agentId, agentConfig as never);
      if (!version) {
        out(`error: no agent ${command.agentId}`);
        return 1;
      }
      out(`agent ${command.agentId}: config version ${version.version} (new calls use it)`);
      return 0;
    }
    const agent = await agents.create({ organizationId: organization.id, name: command.name, engine: command.engine, config: agentConfig as never });
    out(`agent ${agent.id} (${agent.engine}) "${agent.name}" created, config version 1`);
    if (command.number) {
      await context.get(PhoneNumberRepository).upsert({ organizationId: organization.id, e164: command.number, agentId: agent.id });
      out(`${command.number} now answers with this agent`);
    }
    return 0;
  } finally {
    await outbound.onApplicationShutdown();
    await context.close();
  }
}

if (require.main === module) {
  runAgentsCommand(process.argv.slice(2), loadAppConfig(), (line) => process.stdout.write(`${line}\n`)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
