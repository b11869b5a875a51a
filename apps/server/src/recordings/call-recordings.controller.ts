import { Controller, Delete, Get, HttpCode, HttpStatus, Inject, Param, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto } from '../openapi/api-schemas';
import { CallRecordingService } from './call-recording.service';
import { RECORDING_LINK_MAX_TTL_S, RecordingLinkSigner } from './recording-link-signer';
import { RecordingLinkDto, recordingLinkSchema, recordingUnavailable, recordingView, sendRecording } from './recording-responses';

const recordingCallId = z.guid({ message: 'must be a call id (UUID)' });

const linkQuery = z.object({
  expiresInS: z.coerce.number().int().min(10).max(RECORDING_LINK_MAX_TTL_S).default(300),
});
class RecordingLinkQueryDto extends createApiDto(linkQuery) {}

/** A call's recording: the WAV itself (Range requests), a short-lived link to it, and deleting it. */
@ApiTags('Recordings')
@ApiKeyAuthenticated()
@Controller('v1/calls/:id/recording')
@UseGuards(ApiKeyGuard)
export class CallRecordingsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly recordings: CallRecordingService,
    private readonly signer: RecordingLinkSigner,
  ) {}

  @Get()
  @ApiProduces('audio/wav')
  @ApiOkResponse({
    description: 'The recording (PCM16 WAV). Send `Range: bytes=a-b` for part of it (206, `Content-Range`).',
    content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiResponse({ status: 206, description: 'The requested byte range.' })
  @ApiResponse({ status: 416, description: 'The range starts past the end of the file.' })
  @ApiErrors(404, 409, 410)
  async download(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(recordingCallId)) callId: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const { recording, unavailable } = await this.recordings.describe(principal.organizationId, callId);
    if (unavailable || !recording) throw recordingUnavailable(unavailable ?? 'not_found', callId);
    await sendRecording(request, response, recording, (range) => this.recordings.read(principal.organizationId, callId, range));
  }

  @Get('link')
  @ApiOkResponse({ type: RecordingLinkDto, description: 'A URL that serves the recording without an API key until it expires (an <audio> element, a CRM); with the recording\'s details.' })
  @ApiErrors(400, 404, 409, 410)
  async link(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(recordingCallId)) callId: string,
    @Query(new ZodValidationPipe(linkQuery)) query: RecordingLinkQueryDto,
  ): Promise<z.infer<typeof recordingLinkSchema>> {
    const { recording, unavailable } = await this.recordings.describe(principal.organizationId, callId);
    if (unavailable || !recording) throw recordingUnavailable(unavailable ?? 'not_found', callId);
    const expiresAtS = Math.floor(Date.now() / 1000) + query.expiresInS;
    const signature = this.signer.sign(callId, expiresAtS);
    return {
      url: `${this.config.publicBaseUrl}/recordings/${callId}.wav?expires=${expiresAtS}&signature=${signature}`,
      expiresAt: new Date(expiresAtS * 1000).toISOString(),
      recording: recordingView(recording),
    };
  }

  @Delete()
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'The file is removed; the call keeps a record that it was recorded and when the recording was deleted.' })
  @ApiErrors(403, 404, 409, 410)
  async remove(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(recordingCallId)) callId: string): Promise<void> {
    const outcome = await this.recordings.delete(principal.organizationId, callId);
    if (outcome !== 'removed') throw recordingUnavailable(outcome, callId);
  }
}
