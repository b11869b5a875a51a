import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiKeyRateLimiter } from '../auth/api-key-rate-limiter';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors } from '../openapi/api-schemas';
import { claimFirstRunBody, ClaimedFirstRunKeyDto, ClaimFirstRunBodyDto } from './first-run.schema';
import { FirstRunSignInService } from './first-run-sign-in.service';

/**
 * `POST /console/first-run`: the console posts the token of the printed first-run link and gets
 * the organization's new admin key, once. No API key (nobody has one yet); every request counts
 * against the client address's anonymous budget, like a failed API key, so tokens cannot be tried
 * in bulk (they are 256-bit random anyway).
 */
@ApiTags('Console')
@Controller('console/first-run')
export class FirstRunController {
  constructor(
    private readonly firstRun: FirstRunSignInService,
    private readonly rateLimiter: ApiKeyRateLimiter,
  ) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: ClaimedFirstRunKeyDto, description: 'The link is spent; the key is in this response only.' })
  @ApiErrors(400, 410, 429)
  async claim(@Req() request: Request, @Res({ passthrough: true }) response: Response, @Body(new ZodValidationPipe(claimFirstRunBody)) body: ClaimFirstRunBodyDto) {
    await this.rateLimiter.consumeAnonymous(request.ip, response);
    return this.firstRun.claim(body.token);
  }
}
