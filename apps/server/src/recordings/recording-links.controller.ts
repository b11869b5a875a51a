import { Controller, ForbiddenException, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CallRecordingService } from './call-recording.service';
import { RecordingLinkSigner } from './recording-link-signer';
import { recordingUnavailable, sendRecording } from './recording-responses';

const FILE_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.wav$/;

/**
 * `GET /recordings/<callId>.wav?expires=...&signature=...`: the links GET /v1/calls/:id/recording/link
 * makes. No API key: the signature is the authorisation, for this one call until the expiry. A bad
 * or expired link answers 403 whether or not the call exists, so links cannot be used to probe.
 */
@ApiExcludeController()
@Controller('recordings')
export class RecordingLinksController {
  constructor(
    private readonly signer: RecordingLinkSigner,
    private readonly recordings: CallRecordingService,
  ) {}

  @Get(':file')
  async serve(
    @Param('file') file: string,
    @Query('expires') expires: string | undefined,
    @Query('signature') signature: string | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const callId = FILE_NAME.exec(file)?.[1];
    const expiresAtS = Number(expires);
    if (!callId || typeof signature !== 'string' || !this.signer.verify(callId, expiresAtS, signature, Date.now())) {
      throw new ForbiddenException({ statusCode: 403, error: 'Forbidden', code: 'invalid_recording_link', message: 'The link is malformed, altered or expired; ask the API for a new one.' });
    }
    const recording = await this.recordings.recordingOfCall(callId);
    if (!recording) throw recordingUnavailable('not_found', callId);
    const { organizationId } = recording;
    const { unavailable } = await this.recordings.describe(organizationId, callId);
    if (unavailable) throw recordingUnavailable(unavailable, callId);
    await sendRecording(request, response, recording, (range) => this.recordings.read(organizationId, callId, range));
  }
}
