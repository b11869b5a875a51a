import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { AgentRepository, ApiKeyRepository, PhoneNumberRepository, type AgentRecord, type InputJsonValue } from '@switchboard/persistence';
import { EspeakProcessPhonemizer, type ModelStatus } from '@switchboard/inference';
import { PinoLogger } from 'nestjs-pino';
import { AgentConfigValidator } from '../agents-api/agent-config-validation';
import { ClusterLink } from '../cluster/cluster-link';
import { FirstRunSignInService } from '../console/first-run-sign-in.service';
import { InferenceService } from '../inference/inference.service';
import { BootstrapOrganization, DEFAULT_ORGANIZATION_NAME } from '../twilio/accounts/bootstrap-organization';
import { SecretsService } from '../secrets/secrets.service';
import { planStarterAgent, STARTER_LOCAL_VOICES, STARTER_OPENAI_SECRET_NAME, starterEngineSources, type StarterAgentPlan } from './starter-agents';

export { DEFAULT_ORGANIZATION_NAME };
/**
 * The organization's one echo agent, made on a first run with no agents (so the console has
 * something to talk to at once) or for ECHO_AGENT_NUMBER, whichever comes first; the other reuses it.
 */
export const ECHO_AGENT_NAME = 'Echo (talk to yourself)';

const AGENT_PAGE = 100;

/**
 * First-run set-up from the environment: the default organization, its admin key from
 * ADMIN_API_KEY (stored hashed) or else a one-time console sign-in link (either way the start's
 * last line says where the console is: main.ts prints it once listening), and optionally its echo
 * agent (one per organization, see ensureEchoAgent) bound to ECHO_AGENT_NUMBER. Without
 * ADMIN_API_KEY (the console's first-run path) it also
 * makes a starter pipeline agent once the deployment has engines for one (pulled local models or
 * OPENAI_API_KEY, or an OpenAI key stored in its vault as openai-api-key), at the first start or any later
 * one while the organization has no pipeline agent: with pulled speech recognition and a pulled LLM it
 * is the "Local assistant", which needs no key.
 * Idempotent, so it runs on every start.
 */
@Injectable()
export class BootstrapService implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly bootstrap: BootstrapOrganization,
    private readonly apiKeys: ApiKeyRepository,
    private readonly agents: AgentRepository,
    private readonly phoneNumbers: PhoneNumberRepository,
    private readonly firstRun: FirstRunSignInService,
    private readonly cluster: ClusterLink,
    private readonly inference: InferenceService,
    private readonly agentConfigs: AgentConfigValidator,
    private readonly secrets: SecretsService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(BootstrapService.name);
  }

  async onApplicationBootstrap(): Promise<void> {
    const organization = { id: await this.bootstrap.organizationId() };
    if (this.config.adminApiKey) await this.apiKeys.upsertBootstrapKey(organization.id, this.config.adminApiKey);
    // Only the first worker of a cluster: the others start after it and would each print (and
    // retire) a link of their own.
    if (this.cluster.workerId === undefined || this.cluster.workerId === 1) {
      const link = await this.firstRun.prepareAnnouncement(organization.id);
      if (!this.config.adminApiKey) {
        const firstRun = link !== undefined && (await this.agents.list({ organizationId: organization.id, limit: 1 })).items.length === 0;
        if (firstRun) await this.ensureEchoAgent(organization.id);
        await this.ensureStarterAgent(organization.id, firstRun);
      }
    }
    if (!this.config.twilio.authToken) {
      this.logger.warn('TWILIO_AUTH_TOKEN is not set: Twilio routes are off (every Twilio webhook and media socket is refused with 403); the console and the API work');
    }
    if (this.config.echoAgentNumber) {
      const route = await this.phoneNumbers.findRouteByE164(this.config.echoAgentNumber);
      if (!route) {
        const agent = await this.ensureEchoAgent(organization.id);
        await this.phoneNumbers.upsert({ organizationId: organization.id, e164: this.config.echoAgentNumber, agentId: agent.id });
      }
      this.logger.info({ number: this.config.echoAgentNumber }, 'echo agent answers this number');
    }
  }

  /**
   * The organization's echo agent, made if it has none. The engine is the marker: an echo agent has
   * no settings, so any echo agent of the organization (renamed or not) is this one, and the
   * first-run path and ECHO_AGENT_NUMBER, in either order and over any number of starts, share it.
   */
  private async ensureEchoAgent(organizationId: string): Promise<AgentRecord> {
    const existing = await this.agents.findOldestByEngine(organizationId, 'echo');
    return existing ?? this.agents.create({ organizationId, name: ECHO_AGENT_NAME, engine: 'echo', config: {} });
  }

  /**
   * Makes the starter pipeline agent while the organization has none, and says what happened: on a
   * first run always (which agents there are to talk to, or how to get a pipeline agent), later only
   * when an agent was made or none can be yet.
   */
  private async ensureStarterAgent(organizationId: string, firstRun: boolean): Promise<void> {
    const echo = `"${ECHO_AGENT_NAME}" (your own voice back)`;
    if (await this.hasPipelineAgent(organizationId)) {
      if (firstRun) this.logger.info(`first run: in the console, press Talk next to ${echo}`);
      return;
    }
    const plan = await this.starterPlan(organizationId);
    if (plan.kind === 'missing') {
      this.logger.info(firstRun ? `first run: in the console, press Talk next to ${echo}. No pipeline agent yet: ${plan.hint}` : `no pipeline agent yet: ${plan.hint}`);
      return;
    }
    try {
      const config = await this.agentConfigs.validate(organizationId, plan.config);
      await this.agents.create({ organizationId, name: plan.name, engine: 'pipeline', config: config as InputJsonValue });
    } catch (error) {
      this.logger.warn({ err: error }, `could not create the starter pipeline agent "${plan.name}"`);
      return;
    }
    const made = `"${plan.name}" (a pipeline agent: ${plan.engines})`;
    this.logger.info(firstRun ? `first run: in the console, press Talk next to ${echo} or ${made}` : `created ${made}: press Talk next to it in the console`);
  }

  private async starterPlan(organizationId: string): Promise<StarterAgentPlan> {
    const stored = (await this.secrets.existingNames(organizationId, [STARTER_OPENAI_SECRET_NAME])).has(STARTER_OPENAI_SECRET_NAME);
    try {
      const statuses = await this.inference.models.status();
      return planStarterAgent(starterEngineSources(statuses, process.env, stored, await this.espeakRunsFor(statuses)));
    } catch (error) {
      this.logger.warn({ err: error }, 'could not read the models folder; the starter pipeline agent uses remote engines only');
      return planStarterAgent(starterEngineSources([], process.env, stored));
    }
  }

  /** Whether espeak-ng runs here, asked only when a neural voice (which reads phonemes from it) is pulled. */
  private async espeakRunsFor(statuses: readonly ModelStatus[]): Promise<boolean> {
    const voicePulled = statuses.some((status) => status.state === 'installed' && STARTER_LOCAL_VOICES.some((voice) => voice.model === status.name));
    return voicePulled && (await EspeakProcessPhonemizer.isAvailable());
  }

  private async hasPipelineAgent(organizationId: string): Promise<boolean> {
    let cursor: string | undefined;
    do {
      const page = await this.agents.list({ organizationId, limit: AGENT_PAGE, ...(cursor ? { cursor } : {}) });
      if (page.items.some((agent) => agent.engine === 'pipeline')) return true;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return false;
  }
}
