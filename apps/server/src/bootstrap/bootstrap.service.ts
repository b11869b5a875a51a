import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { AgentRepository, ApiKeyRepository, PhoneNumberRepository } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { ClusterLink } from '../cluster/cluster-link';
import { FirstRunSignInService } from '../console/first-run-sign-in.service';
import { BootstrapOrganization, DEFAULT_ORGANIZATION_NAME } from '../twilio-accounts/bootstrap-organization';

export { DEFAULT_ORGANIZATION_NAME };
export const ECHO_AGENT_NAME = 'Echo (loopback test agent)';
/** Made on a first run with no agents, so the console has something to talk to at once. */
export const FIRST_RUN_AGENT_NAME = 'Echo (talk to yourself)';

/**
 * First-run set-up from the environment: the default organization, its admin key from
 * ADMIN_API_KEY (stored hashed) or else a one-time console sign-in link, and optionally an echo
 * agent bound to ECHO_AGENT_NUMBER. Idempotent, so it runs on every start.
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
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(BootstrapService.name);
  }

  async onApplicationBootstrap(): Promise<void> {
    const organization = { id: await this.bootstrap.organizationId() };
    if (this.config.adminApiKey) {
      await this.apiKeys.upsertBootstrapKey(organization.id, this.config.adminApiKey);
    } else if (this.cluster.workerId === undefined || this.cluster.workerId === 1) {
      // Only the first worker of a cluster: the others start after it and would each print (and
      // retire) a link of their own.
      const link = await this.firstRun.announce(organization.id);
      if (link !== undefined && (await this.agents.list({ organizationId: organization.id, limit: 1 })).items.length === 0) {
        await this.agents.create({ organizationId: organization.id, name: FIRST_RUN_AGENT_NAME, engine: 'echo', config: {} });
      }
    }
    if (!this.config.twilio.authToken) {
      this.logger.warn('TWILIO_AUTH_TOKEN is not set: Twilio routes are off (every Twilio webhook and media socket is refused with 403); the console and the API work');
    }
    if (this.config.echoAgentNumber) {
      const route = await this.phoneNumbers.findRouteByE164(this.config.echoAgentNumber);
      if (!route) {
        const agent = await this.agents.create({ organizationId: organization.id, name: ECHO_AGENT_NAME, engine: 'echo', config: {} });
        await this.phoneNumbers.upsert({ organizationId: organization.id, e164: this.config.echoAgentNumber, agentId: agent.id });
      }
      this.logger.info({ number: this.config.echoAgentNumber }, 'echo agent answers this number');
    }
  }
}
