import { BadRequestException, Injectable } from '@nestjs/common';
import { AgentConfigError, parseAgentConfig, type AgentConfig } from '@switchboard/conversation';
import { compileToolSchema } from '@switchboard/conversation/tools/tool-schema';
import { isStandardWebhooksSecret } from '@switchboard/conversation/tools/webhook-signature';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import { SecretsService } from '../secrets/secrets.service';

export interface ConfigProblem {
  path: string;
  message: string;
}

/**
 * Everything a tenant writes into an agent config is checked when it is saved, not discovered broken
 * at call time: the shape (zod), every URL the server will call against the outbound rule (private
 * addresses refused, with the reason), every secret reference against the organization's vault,
 * webhook signing secrets in Standard Webhooks form, and every tool's `parameters` compiled on the
 * linear-time regex engine. A bad config is a 400 listing every problem with its path (relative to
 * `config`), so a client can mark all the bad fields at once.
 */
@Injectable()
export class AgentConfigValidator {
  constructor(
    private readonly secrets: SecretsService,
    private readonly outbound: TenantOutbound,
  ) {}

  /** The config with every default filled in (what gets stored), or a 400. */
  async validate(organizationId: string, input: unknown): Promise<AgentConfig> {
    let config: AgentConfig;
    try {
      config = parseAgentConfig(input);
    } catch (error) {
      if (!(error instanceof AgentConfigError)) throw error;
      throw invalidConfig(error.problems);
    }
    const problems = [...(await this.urlProblems(config)), ...(await this.secretProblems(organizationId, config)), ...toolSchemaProblems(config)];
    if (problems.length > 0) throw invalidConfig(problems);
    return config;
  }

  private async urlProblems(config: AgentConfig): Promise<ConfigProblem[]> {
    const urls: Array<{ path: string; url: string | undefined; kind: 'http' | 'ws' }> = [
      { path: 'stt.baseUrl', url: config.stt.baseUrl, kind: 'http' },
      { path: 'llm.baseUrl', url: config.llm.baseUrl, kind: 'http' },
      { path: 'tts.baseUrl', url: config.tts.baseUrl, kind: 'http' },
      { path: 'realtime.url', url: config.realtime.url, kind: 'ws' },
      ...config.tools.flatMap((tool, index) => (tool.type === 'webhook' ? [{ path: `tools.${index}.url`, url: tool.url, kind: 'http' as const }] : [])),
    ];
    const checks = await Promise.all(
      urls.map(async ({ path, url, kind }) => {
        if (url === undefined) return undefined;
        const check = await this.outbound.guard.checkUrlResolved(url, kind);
        return check.ok ? undefined : { path, message: `refused: ${check.reason}` };
      }),
    );
    return checks.filter((problem): problem is ConfigProblem => problem !== undefined);
  }

  private async secretProblems(organizationId: string, config: AgentConfig): Promise<ConfigProblem[]> {
    const references: Array<{ path: string; name: string; signing: boolean }> = [
      ...(['stt', 'llm', 'tts', 'realtime'] as const).flatMap((engine) => {
        const name = config[engine].apiKeySecret;
        return name === undefined ? [] : [{ path: `${engine}.apiKeySecret`, name, signing: false }];
      }),
      ...config.tools.flatMap((tool, index) => (tool.type === 'webhook' ? [{ path: `tools.${index}.signingSecret`, name: tool.signingSecret, signing: true }] : [])),
    ];
    if (references.length === 0) return [];
    const existing = await this.secrets.existingNames(organizationId, references.map((reference) => reference.name));
    const problems: ConfigProblem[] = [];
    for (const reference of references) {
      if (!existing.has(reference.name)) {
        problems.push({ path: reference.path, message: `no secret named "${reference.name}" in this organization; create it with POST /v1/secrets` });
        continue;
      }
      if (!reference.signing) continue;
      const secret = await this.secrets.resolve(organizationId, reference.name);
      if (secret && !isStandardWebhooksSecret(secret.value)) {
        problems.push({ path: reference.path, message: `the secret "${reference.name}" is not a Standard Webhooks signing secret ("whsec_" + base64 of 24-64 random bytes)` });
      }
    }
    return problems;
  }
}

function toolSchemaProblems(config: AgentConfig): ConfigProblem[] {
  return config.tools.flatMap((tool, index) => {
    if (tool.type !== 'webhook') return [];
    const compiled = compileToolSchema(tool.parameters);
    if (compiled.ok) return [];
    return compiled.problems.map((problem) => ({ path: joinPath(`tools.${index}.parameters`, problem.path), message: problem.message }));
  });
}

function joinPath(prefix: string, path: string): string {
  return path === '' ? prefix : `${prefix}.${path}`;
}

function invalidConfig(problems: ConfigProblem[]): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    code: 'invalid_agent_config',
    message: 'The agent config is invalid.',
    problems,
  });
}
