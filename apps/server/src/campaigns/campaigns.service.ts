import { Injectable } from '@nestjs/common';
import {
  AgentRepository,
  CampaignRepository,
  emptyProgress,
  PhoneNumberRepository,
  TransactionRunner,
  type CampaignContactPage,
  type CampaignRecord,
  type ListCampaignContactsInput,
  type NewCampaign,
  type NewCampaignContact,
  type Tx,
} from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { fromNumberNotOwned, twilioNotConfigured } from '../calls/outbound-call-errors';
import { voicemailForCall } from '../calls/outbound-voicemail';
import { Clock } from '../common/clock';
import { unknownAgent } from '../phone-numbers/phone-number-errors';
import { TwilioAccountService } from '../twilio/accounts/twilio-account.service';
import { normaliseWindows } from './calling-windows';
import { MAX_REPORTED_ISSUES, parseContactsCsv, type ContactIssue, type LabelledContact } from './campaign-contacts-csv';
import { campaignFinished, campaignNotFound, invalidCampaign } from './campaign-errors';
import type { CreateCampaignBody } from './campaign-requests.schema';
import { campaignView, type CampaignView } from './campaign-responses.schema';

/**
 * Campaigns of an organization: created with their contacts in one transaction, read with their
 * progress, paused, resumed and cancelled under the campaign's row lock (the lock the dialer and
 * call outcomes take too, so none of them acts on a status that just changed).
 */
@Injectable()
export class CampaignsService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly campaigns: CampaignRepository,
    private readonly agents: AgentRepository,
    private readonly phoneNumbers: PhoneNumberRepository,
    private readonly twilioAccounts: TwilioAccountService,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CampaignsService.name);
  }

  async create(organizationId: string, body: CreateCampaignBody): Promise<CampaignView> {
    const now = this.clock.now();
    const contacts = contactsOf(body);
    const startAt = body.schedule.start === undefined ? now : new Date(body.schedule.start);
    const endAt = body.schedule.end === undefined ? null : new Date(body.schedule.end);
    if (endAt !== null && endAt <= now) throw invalidCampaign([{ field: 'schedule.end', rule: 'custom', message: 'must be in the future' }]);

    // The same checks a call of the campaign will meet, made now rather than failing every call later.
    const agent = await this.agents.findById(organizationId, body.agentId);
    if (!agent) throw unknownAgent(body.agentId);
    if (!(await this.phoneNumbers.ownsNumber(organizationId, body.from))) throw fromNumberNotOwned(body.from);
    const snapshot = await this.agents.configVersion(agent.id, agent.currentVersion);
    const firstContact = contacts[0]!.contact;
    voicemailForCall(
      { agentId: agent.id, from: body.from, to: firstContact.to, variables: {}, ...(body.machineDetection && { machineDetection: body.machineDetection }), ...(body.voicemail !== undefined && { voicemail: body.voicemail }) },
      agent.engine,
      snapshot?.config,
    );
    if (!this.twilioAccounts.restCredentials(await this.twilioAccounts.forOrganization(organizationId))) throw twilioNotConfigured();

    const campaign: NewCampaign = {
      organizationId,
      name: body.name,
      agentId: agent.id,
      fromNumber: body.from,
      timeZone: body.schedule.timeZone,
      callingWindows: normaliseWindows(body.schedule.windows),
      startAt,
      endAt,
      maxConcurrentCalls: body.maxConcurrentCalls,
      retry: body.retry,
      machineDetection: body.machineDetection ?? null,
      voicemail: body.voicemail === undefined ? { mode: 'agent', message: null } : body.voicemail === null ? { mode: 'none', message: null } : { mode: 'message', message: body.voicemail.message },
    };
    const rows: NewCampaignContact[] = contacts.map(({ contact }) => ({ to: contact.to, timeZone: contact.timeZone ?? body.schedule.timeZone, variables: contact.variables }));
    const created = await this.transactions.run((tx) => this.campaigns.insert(tx, campaign, rows));
    this.logger.info({ campaignId: created.id, organizationId, contacts: rows.length }, 'campaign created');
    return this.view(created);
  }

  async list(organizationId: string, limit: number, cursor?: string): Promise<{ data: CampaignView[]; nextCursor: string | null }> {
    const page = await this.campaigns.list(organizationId, limit, cursor);
    const progress = await this.campaigns.progress(page.items.map((campaign) => campaign.id));
    return { data: page.items.map((campaign) => campaignView(campaign, progress.get(campaign.id) ?? emptyProgress())), nextCursor: page.nextCursor };
  }

  async get(organizationId: string, id: string): Promise<CampaignView> {
    const campaign = await this.campaigns.find(organizationId, id);
    if (!campaign) throw campaignNotFound(id);
    return this.view(campaign);
  }

  async contacts(organizationId: string, id: string, input: ListCampaignContactsInput): Promise<CampaignContactPage> {
    const page = await this.campaigns.contacts(organizationId, id, input);
    if (!page) throw campaignNotFound(id);
    return page;
  }

  /** No new calls until resumed; calls in progress go on, and their outcomes (and retries) are recorded. */
  pause(organizationId: string, id: string): Promise<CampaignView> {
    return this.transition(organizationId, id, async (tx, campaign) => {
      if (campaign.status === 'paused') return campaign;
      if (campaign.status !== 'running') throw campaignFinished(id, campaign.status, 'paused');
      return this.campaigns.setStatus(tx, id, 'paused', 'api');
    });
  }

  /** Dialing again (also after a pause for a reason: if the reason stands, the next call pauses it again). */
  resume(organizationId: string, id: string): Promise<CampaignView> {
    return this.transition(organizationId, id, async (tx, campaign) => {
      if (campaign.status === 'running') return campaign;
      if (campaign.status !== 'paused') throw campaignFinished(id, campaign.status, 'resumed');
      return this.campaigns.setStatus(tx, id, 'running', null);
    });
  }

  /** Pending contacts are cancelled; calls in progress go on to their end (and are not retried). */
  cancel(organizationId: string, id: string): Promise<CampaignView> {
    return this.transition(organizationId, id, async (tx, campaign) => {
      if (campaign.status === 'cancelled') return campaign;
      if (campaign.status === 'completed') throw campaignFinished(id, campaign.status, 'cancelled');
      const cancelled = await this.campaigns.cancelPending(tx, id);
      this.logger.info({ campaignId: id, cancelledContacts: cancelled }, 'campaign cancelled');
      return this.campaigns.setStatus(tx, id, 'cancelled', 'api');
    });
  }

  private async transition(organizationId: string, id: string, change: (tx: Tx, campaign: CampaignRecord) => Promise<CampaignRecord>): Promise<CampaignView> {
    const changed = await this.transactions.run(async (tx) => {
      const campaign = await this.campaigns.lock(tx, id, organizationId);
      if (!campaign) throw campaignNotFound(id);
      return change(tx, campaign);
    });
    return this.view(changed);
  }

  private async view(campaign: CampaignRecord): Promise<CampaignView> {
    return campaignView(campaign, (await this.campaigns.progress([campaign.id])).get(campaign.id) ?? emptyProgress());
  }
}

/**
 * The request's contacts (the array, or the CSV's rows), each labelled with the field that names it
 * in errors. A number twice in one campaign is refused: it would be called twice.
 */
function contactsOf(body: CreateCampaignBody): LabelledContact[] {
  const { contacts, issues } =
    body.contactsCsv !== undefined ? parseContactsCsv(body.contactsCsv) : { contacts: (body.contacts ?? []).map((contact, index) => ({ contact, field: `contacts.${index}` })), issues: [] as ContactIssue[] };
  const firstWith = new Map<string, string>();
  for (const { contact, field } of contacts) {
    const first = firstWith.get(contact.to);
    if (first === undefined) firstWith.set(contact.to, field);
    else issues.push({ field: `${field}.to`, rule: 'custom', message: `${contact.to} is already ${first}.to: a number is called once per campaign` });
  }
  if (issues.length > MAX_REPORTED_ISSUES) {
    const more = issues.length - MAX_REPORTED_ISSUES;
    throw invalidCampaign([...issues.slice(0, MAX_REPORTED_ISSUES), { field: body.contactsCsv !== undefined ? 'contactsCsv' : 'contacts', rule: 'custom', message: `and ${more} more problems` }]);
  }
  if (issues.length > 0) throw invalidCampaign(issues);
  return contacts;
}
