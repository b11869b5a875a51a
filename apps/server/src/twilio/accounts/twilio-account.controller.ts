import { BadGatewayException, BadRequestException, Body, ConflictException, Controller, Delete, Get, HttpCode, HttpStatus, NotFoundException, Put, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../../auth/api-key.guard';
import { Principal } from '../../auth/principal.decorator';
import { RequireScope } from '../../auth/require-scope.decorator';
import { ZodValidationPipe } from '../../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto, isoDateTime } from '../../openapi/api-schemas';
import { BootstrapOrganization } from './bootstrap-organization';
import { TwilioAccountError, TwilioAccountService } from './twilio-account.service';

const connectTwilioAccountBody = z.strictObject({
  accountSid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, 'must be AC followed by 32 hex characters'),
  authToken: z.string().min(16).max(256).describe('Stored encrypted; checked with Twilio first; never shown again.'),
});
class ConnectTwilioAccountBodyDto extends createApiDto(connectTwilioAccountBody) {}
class TwilioAccountDto extends createApiDto(z.strictObject({ accountSid: z.string(), updatedAt: isoDateTime })) {}

/**
 * The organization's own Twilio account. Its numbers must belong to it (checked with Twilio when
 * one is bound), and its calls' webhooks and media sockets are verified with its auth token.
 */
@ApiTags('Organization')
@ApiKeyAuthenticated()
@Controller('v1/organization/twilio-account')
@UseGuards(ApiKeyGuard)
export class TwilioAccountController {
  constructor(
    private readonly accounts: TwilioAccountService,
    private readonly bootstrap: BootstrapOrganization,
  ) {}

  @Get()
  @ApiOkResponse({ type: TwilioAccountDto })
  @ApiErrors(404)
  async get(@Principal() principal: ApiPrincipal) {
    const account = await this.accounts.accountSidOf(principal.organizationId);
    if (!account) throw notConnected();
    return account;
  }

  @Put()
  @RequireScope('admin')
  @ApiOkResponse({ type: TwilioAccountDto, description: 'Connects (or replaces) the account after checking the credentials with Twilio.' })
  @ApiErrors(400, 403, 409, 502)
  async connect(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(connectTwilioAccountBody)) body: ConnectTwilioAccountBodyDto) {
    if (await this.bootstrap.isBootstrap(principal.organizationId)) {
      throw new BadRequestException({ statusCode: 400, error: 'Bad Request', code: 'operator_account', message: "This organization is served by the operator's Twilio account (TWILIO_ACCOUNT_SID)." });
    }
    try {
      return await this.accounts.connect(principal.organizationId, body.accountSid, body.authToken);
    } catch (error) {
      if (error instanceof TwilioAccountError && error.code === 'twilio_account_taken') {
        throw new ConflictException({ statusCode: 409, error: 'Conflict', code: 'twilio_account_taken', message: error.message });
      }
      if (error instanceof TwilioAccountError && error.code === 'twilio_credentials_invalid') {
        throw new BadRequestException({ statusCode: 400, error: 'Bad Request', code: error.code, message: error.message });
      }
      if (error instanceof TwilioAccountError) throw new BadGatewayException({ statusCode: 502, error: 'Bad Gateway', code: error.code, message: error.message });
      throw error;
    }
  }

  @Delete()
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: "Disconnects the account. Refused while numbers are bound: release them first." })
  @ApiErrors(403, 404, 409)
  async disconnect(@Principal() principal: ApiPrincipal): Promise<void> {
    if (await this.accounts.hasNumbers(principal.organizationId)) {
      throw new ConflictException({ statusCode: 409, error: 'Conflict', code: 'numbers_bound', message: 'Release the phone numbers of this account first (DELETE /v1/phone-numbers/:id).' });
    }
    if (!(await this.accounts.disconnect(principal.organizationId))) throw notConnected();
  }
}

function notConnected(): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'twilio_account_not_connected', message: 'No Twilio account is connected: PUT /v1/organization/twilio-account.' });
}
