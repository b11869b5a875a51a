import { Injectable } from '@nestjs/common';
import { OrganizationRepository } from '@switchboard/persistence';

/** The organization the deployment starts with; the operator's own Twilio account (TWILIO_*) serves it. */
export const DEFAULT_ORGANIZATION_NAME = 'Default organization';

/**
 * The bootstrap organization's id, created on first use (idempotently, race-safe) and then kept:
 * every Twilio webhook asks whether a number's organization is the one the operator's account serves.
 */
@Injectable()
export class BootstrapOrganization {
  private id: Promise<string> | undefined;

  constructor(private readonly organizations: OrganizationRepository) {}

  organizationId(): Promise<string> {
    this.id ??= this.organizations.ensure(DEFAULT_ORGANIZATION_NAME).then((organization) => organization.id);
    // A database outage at the first ask must not be remembered.
    this.id.catch(() => (this.id = undefined));
    return this.id;
  }

  async isBootstrap(organizationId: string): Promise<boolean> {
    return (await this.organizationId()) === organizationId;
  }
}
