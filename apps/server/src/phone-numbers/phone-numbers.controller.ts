import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { AgentRepository, PersistenceError, PhoneNumberRepository } from '@switchboard/persistence';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { phoneNumberNotFound, phoneNumberTaken, unknownAgent } from './phone-number-errors';
import {
  createPhoneNumberBody,
  listPhoneNumbersQuery,
  phoneNumberIdParam,
  updatePhoneNumberBody,
  type CreatePhoneNumberBody,
  type ListPhoneNumbersQuery,
  type UpdatePhoneNumberBody,
} from './phone-number-requests.schema';

/** Phone numbers of the API key's organization and the agent each one routes to. */
@Controller('v1/phone-numbers')
@UseGuards(ApiKeyGuard)
export class PhoneNumbersController {
  constructor(
    private readonly phoneNumbers: PhoneNumberRepository,
    private readonly agents: AgentRepository,
  ) {}

  /** Registers a number; posting a number the organization already has re-points it (idempotent). */
  @Post()
  @RequireScope('admin')
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createPhoneNumberBody)) body: CreatePhoneNumberBody) {
    const { organizationId } = principal;
    await this.assertAgentExists(organizationId, body.agentId);
    try {
      return await this.phoneNumbers.upsert({ organizationId, e164: body.e164, agentId: body.agentId });
    } catch (error) {
      if (error instanceof PersistenceError && error.code === 'conflict') throw phoneNumberTaken(body.e164);
      throw error;
    }
  }

  @Get()
  async list(@Principal() principal: ApiPrincipal, @Query(new ZodValidationPipe(listPhoneNumbersQuery)) query: ListPhoneNumbersQuery) {
    const page = await this.phoneNumbers.list({ organizationId: principal.organizationId, limit: query.limit, cursor: query.cursor });
    return { data: page.items, nextCursor: page.nextCursor };
  }

  @Get(':id')
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(phoneNumberIdParam)) id: string) {
    const phoneNumber = await this.phoneNumbers.findById(principal.organizationId, id);
    if (!phoneNumber) throw phoneNumberNotFound(id);
    return phoneNumber;
  }

  @Patch(':id')
  @RequireScope('admin')
  async update(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(phoneNumberIdParam)) id: string,
    @Body(new ZodValidationPipe(updatePhoneNumberBody)) body: UpdatePhoneNumberBody,
  ) {
    const { organizationId } = principal;
    // The number in the URL first: another organization's number is a 404 whatever the body says.
    if (!(await this.phoneNumbers.findById(organizationId, id))) throw phoneNumberNotFound(id);
    await this.assertAgentExists(organizationId, body.agentId);
    const updated = await this.phoneNumbers.setAgent(organizationId, id, body.agentId);
    if (!updated) throw phoneNumberNotFound(id);
    return updated;
  }

  @Delete(':id')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(phoneNumberIdParam)) id: string): Promise<void> {
    if (!(await this.phoneNumbers.delete(principal.organizationId, id))) throw phoneNumberNotFound(id);
  }

  private async assertAgentExists(organizationId: string, agentId: string | null): Promise<void> {
    if (agentId !== null && !(await this.agents.findById(organizationId, agentId))) throw unknownAgent(agentId);
  }
}
