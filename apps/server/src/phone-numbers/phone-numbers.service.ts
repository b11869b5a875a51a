import { Injectable } from '@nestjs/common';
import { AgentRepository, PersistenceError, PhoneNumberRepository, type ListPhoneNumbersInput, type PhoneNumberRecord } from '@switchboard/persistence';
import { TwilioAccountError, TwilioAccountService } from '../twilio/accounts/twilio-account.service';
import { numberNotInAccount, ownershipUnchecked, phoneNumberNotFound, phoneNumberTaken, unknownAgent } from './phone-number-errors';

/**
 * An organization's phone numbers and the agent each routes to. A new number must belong to the
 * organization's own Twilio account (asked of Twilio), so no organization can take another's
 * callers by binding their number first. Refusals are the API's errors (phone-number-errors.ts).
 */
@Injectable()
export class PhoneNumbersService {
  constructor(
    private readonly phoneNumbers: PhoneNumberRepository,
    private readonly agents: AgentRepository,
    private readonly twilioAccounts: TwilioAccountService,
  ) {}

  /** Registers a number; a number the organization already has is re-pointed (idempotent). */
  async register(organizationId: string, e164: string, agentId: string | null): Promise<PhoneNumberRecord> {
    await this.assertAgentExists(organizationId, agentId);
    if (!(await this.phoneNumbers.ownsNumber(organizationId, e164))) await this.assertInTwilioAccount(organizationId, e164);
    try {
      return await this.phoneNumbers.upsert({ organizationId, e164, agentId });
    } catch (error) {
      if (error instanceof PersistenceError && error.code === 'conflict') throw phoneNumberTaken(e164);
      throw error;
    }
  }

  list(input: ListPhoneNumbersInput) {
    return this.phoneNumbers.list(input);
  }

  findById(organizationId: string, id: string): Promise<PhoneNumberRecord | null> {
    return this.phoneNumbers.findById(organizationId, id);
  }

  /** Re-points the number to another agent (or to none). */
  async setAgent(organizationId: string, id: string, agentId: string | null): Promise<PhoneNumberRecord> {
    // The number in the URL first: another organization's number is a 404 whatever the body says.
    if (!(await this.phoneNumbers.findById(organizationId, id))) throw phoneNumberNotFound(id);
    await this.assertAgentExists(organizationId, agentId);
    const updated = await this.phoneNumbers.setAgent(organizationId, id, agentId);
    if (!updated) throw phoneNumberNotFound(id);
    return updated;
  }

  /** False when the organization has no such number. */
  release(organizationId: string, id: string): Promise<boolean> {
    return this.phoneNumbers.delete(organizationId, id);
  }

  private async assertInTwilioAccount(organizationId: string, e164: string): Promise<void> {
    let owned: boolean;
    try {
      owned = await this.twilioAccounts.ownsNumber(organizationId, e164);
    } catch (error) {
      if (error instanceof TwilioAccountError) throw ownershipUnchecked(error);
      throw error;
    }
    if (!owned) throw numberNotInAccount(e164);
  }

  private async assertAgentExists(organizationId: string, agentId: string | null): Promise<void> {
    if (agentId !== null && !(await this.agents.findById(organizationId, agentId))) throw unknownAgent(agentId);
  }
}
