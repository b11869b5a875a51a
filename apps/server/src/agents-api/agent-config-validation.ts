import { BadRequestException, Injectable } from '@nestjs/common';
import { compileToolSchema } from '@switchboard/conversation';
import { isStandardWebhooksSecret } from '@switchboard/secrets';
import { type AgentConfig, AgentConfigError, parseAgentConfig } from '@switchboard/agent-config';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import { SecretsService } from '../secrets/secrets.service';

export interface ConfigProblem {
  path: string;
  message: string;
}

/**
 * Everything a tenant writes into an agent config is checked when it is saved, not discovered broken
 * at call time: the shape (zod), every URL the server will call against the outbound rule (private
 * addresses refused, with the reason), webhook signing secrets that exist in Standard Webhooks form, and every tool's `parameters` (and the analysis's
 * `structuredData`) compiled on the linear-time regex engine. A bad config is a 400 listing every
 * problem with its path (relative to `config`), so a client can mark all the bad fields at once.
 */
@Injectable()
export class AgentConfigValidator {
  constructor(
    private readonly secrets: SecretsService,
    private readonly outbound: TenantOutbound,
  ) {}

  /**
   * The config with every default filled in (what gets stored), or a 400 listing every problem at
   * once: the shape's, and those of the URLs, secret references and tool schemas it can read even
   * when the shape is wrong elsewhere.
   */
  async validate(organizationId: string, input: unknown): Promise<AgentConfig> {
    let config: AgentConfig | undefined;
    let shapeProblems: ConfigProblem[] = [];
    try {
      config = parseAgentConfig(input);
    } catch (error) {
      if (!(error instanceof AgentConfigError)) throw error;
      shapeProblems = error.problems;
    }
    const written = new WrittenConfig(config ?? input);
    const problems = [...shapeProblems, ...(await this.urlProblems(written)), ...(await this.secretProblems(organizationId, written)), ...toolSchemaProblems(written)];
    if (problems.length > 0 || config === undefined) throw invalidConfig(dedupe(problems));
    return config;
  }

  private async urlProblems(written: WrittenConfig): Promise<ConfigProblem[]> {
    const urls: Array<{ path: string; url: string | undefined; kind: 'http' | 'ws' }> = [
      ...ENGINES.filter((engine) => engine !== 'realtime').map((engine) => ({ path: `${engine}.baseUrl`, url: written.text(engine, 'baseUrl'), kind: 'http' as const })),
      { path: 'realtime.url', url: written.text('realtime', 'url'), kind: 'ws' },
      { path: 'analysis.llm.baseUrl', url: written.analysisLlmText('baseUrl'), kind: 'http' },
      ...written.webhookTools().map(({ index, tool }) => ({ path: `tools.${index}.url`, url: stringOf(tool['url']), kind: 'http' as const })),
    ];
    const checks = await Promise.all(
      urls.map(async ({ path, url, kind }) => {
        if (url === undefined || !URL.canParse(url)) return undefined; // the shape check already said so
        const check = await this.outbound.guard.checkUrlResolved(url, kind);
        return check.ok ? undefined : { path, message: `refused: ${check.reason}` };
      }),
    );
    return checks.filter((problem): problem is ConfigProblem => problem !== undefined);
  }

  private async secretProblems(organizationId: string, written: WrittenConfig): Promise<ConfigProblem[]> {
    const references: Array<{ path: string; name: string; signing: boolean }> = [
      ...ENGINES.flatMap((engine) => {
        const name = written.text(engine, 'apiKeySecret');
        return name === undefined ? [] : [{ path: `${engine}.apiKeySecret`, name, signing: false }];
      }),
      ...[written.analysisLlmText('apiKeySecret')].flatMap((name) => (name === undefined ? [] : [{ path: 'analysis.llm.apiKeySecret', name, signing: false }])),
      ...written.webhookTools().flatMap(({ index, tool }) => {
        const name = stringOf(tool['signingSecret']);
        return name === undefined ? [] : [{ path: `tools.${index}.signingSecret`, name, signing: true }];
      }),
    ];
    if (references.length === 0) return [];
    const existing = await this.secrets.existingNames(organizationId, references.map((reference) => reference.name));
    const problems: ConfigProblem[] = [];
    for (const reference of references) {
      // A secret not stored yet does not make the config invalid: the agent is saved and reads "not
      // ready" with that problem (AgentReadinessService) until the secret is stored.
      if (!existing.has(reference.name) || !reference.signing) continue;
      const secret = await this.secrets.resolve(organizationId, reference.name);
      if (secret && !isStandardWebhooksSecret(secret.value)) {
        problems.push({ path: reference.path, message: `the secret "${reference.name}" is not a Standard Webhooks signing secret ("whsec_" + base64 of 24-64 random bytes)` });
      }
    }
    return problems;
  }
}

const ENGINES = ['stt', 'llm', 'tts', 'realtime'] as const;

/**
 * The config as written, read defensively: the parsed config when its shape is valid, else the raw
 * input, so the other checks can still report what they find beside the shape's problems.
 */
class WrittenConfig {
  constructor(private readonly value: unknown) {}

  text(section: (typeof ENGINES)[number], field: string): string | undefined {
    const part = objectOf(objectOf(this.value)?.[section]);
    return stringOf(part?.[field]);
  }

  /** A text field of `analysis.llm` (the analysis's own model endpoint). */
  analysisLlmText(field: string): string | undefined {
    return stringOf(objectOf(objectOf(objectOf(this.value)?.['analysis'])?.['llm'])?.[field]);
  }

  /** `analysis.structuredData` as written (undefined when absent). */
  analysisSchema(): unknown {
    return objectOf(objectOf(this.value)?.['analysis'])?.['structuredData'];
  }

  webhookTools(): Array<{ index: number; tool: Record<string, unknown> }> {
    const tools = objectOf(this.value)?.['tools'];
    if (!Array.isArray(tools)) return [];
    return tools.flatMap((tool: unknown, index) => {
      const record = objectOf(tool);
      return record?.['type'] === 'webhook' ? [{ index, tool: record }] : [];
    });
  }
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function toolSchemaProblems(written: WrittenConfig): ConfigProblem[] {
  const schemas = [
    // Absent parameters take the default (an empty object schema).
    ...written.webhookTools().map(({ index, tool }) => ({ path: `tools.${index}.parameters`, schema: tool['parameters'] })),
    // The analysis's structured data is validated with the same bounded compiler (RE2, size limits).
    { path: 'analysis.structuredData', schema: written.analysisSchema() },
  ];
  return schemas.flatMap(({ path, schema }) => {
    if (schema === undefined) return [];
    const compiled = compileToolSchema(schema);
    if (compiled.ok) return [];
    return compiled.problems.map((problem) => ({ path: joinPath(path, problem.path), message: problem.message.replace(/^parameters must/, 'must') }));
  });
}

/** The shape check and a later one may both object to one path for one reason: listed once. */
function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
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
