import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import { phoneNumberNotFound } from './phone-number-errors';
import {
  createPhoneNumberBody,
  listPhoneNumbersQuery,
  phoneNumberIdParam,
  updatePhoneNumberBody,
  CreatePhoneNumberBodyDto,
  ListPhoneNumbersQueryDto,
  PhoneNumberDto,
  PhoneNumberPageDto,
  UpdatePhoneNumberBodyDto,
} from './phone-number-requests.schema';
import { PhoneNumbersService } from './phone-numbers.service';

/** Phone numbers of the API key's organization and the agent each one routes to. */
@ApiTags('Phone numbers')
@ApiKeyAuthenticated()
@Controller('v1/phone-numbers')
@UseGuards(ApiKeyGuard)
export class PhoneNumbersController {
  constructor(private readonly phoneNumbers: PhoneNumbersService) {}

  /**
   * Registers a number; posting a number the organization already has re-points it (idempotent).
   * A new number must belong to the organization's own Twilio account (asked of Twilio), so no
   * organization can take another's callers by binding their number first.
   */
  @Post()
  @RequireScope('admin')
  @ApiCreatedResponse({ type: PhoneNumberDto })
  @ApiErrors(400, 403, 409, 502)
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createPhoneNumberBody)) body: CreatePhoneNumberBodyDto) {
    return this.phoneNumbers.register(principal.organizationId, body.e164, body.agentId);
  }

  @Get()
  @ApiOkResponse({ type: PhoneNumberPageDto })
  @ApiErrors(400)
  async list(@Principal() principal: ApiPrincipal, @Query(new ZodValidationPipe(listPhoneNumbersQuery)) query: ListPhoneNumbersQueryDto) {
    const page = await this.phoneNumbers.list({ organizationId: principal.organizationId, limit: query.limit, cursor: query.cursor });
    return { data: page.items, nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOkResponse({ type: PhoneNumberDto })
  @ApiErrors(404)
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(phoneNumberIdParam)) id: string) {
    const phoneNumber = await this.phoneNumbers.findById(principal.organizationId, id);
    if (!phoneNumber) throw phoneNumberNotFound(id);
    return phoneNumber;
  }

  @Patch(':id')
  @RequireScope('admin')
  @ApiOkResponse({ type: PhoneNumberDto, description: 'Re-points the number to another agent (or to none).' })
  @ApiErrors(400, 403, 404)
  async update(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(phoneNumberIdParam)) id: string,
    @Body(new ZodValidationPipe(updatePhoneNumberBody)) body: UpdatePhoneNumberBodyDto,
  ) {
    return this.phoneNumbers.setAgent(principal.organizationId, id, body.agentId);
  }

  @Delete(':id')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'The number is released (another organization may then register it).' })
  @ApiErrors(403, 404)
  async remove(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(phoneNumberIdParam)) id: string): Promise<void> {
    if (!(await this.phoneNumbers.release(principal.organizationId, id))) throw phoneNumberNotFound(id);
  }
}
