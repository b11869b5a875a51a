import { ConflictException, GoneException, HttpException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import type { CallRecordingRecord } from '@switchboard/persistence';
import type { ByteRange } from '@switchboard/recordings';
import type { Request, Response } from 'express';
import parseRange from 'range-parser';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { createApiDto, isoDateTime, uuid } from '../openapi/api-schemas';
import type { RecordingRead, RecordingUnavailable } from './call-recording.service';

export const recordingSchema = z.strictObject({
  callId: uuid,
  status: z.enum(['recording', 'available', 'failed', 'deleted']).describe("'recording' while the call runs and until the file is stored."),
  channels: z.enum(['dual', 'mono']).describe("'dual': caller on the left channel, agent (as the caller heard it) on the right."),
  sampleRate: z.number().int(),
  contentType: z.string(),
  durationMs: z.number().int().nullable(),
  bytes: z.number().int().nullable(),
  startedOffsetMs: z.number().int().describe("Where the recording's first sample sits on the call's timeline (ms since the call's startedAt): transcript turn at startMs is at startMs - startedOffsetMs in the file."),
  createdAt: isoDateTime,
  completedAt: isoDateTime.nullable(),
  deletedAt: isoDateTime.nullable(),
});
export class RecordingDto extends createApiDto(recordingSchema) {}

export const recordingLinkSchema = z.strictObject({
  url: z.string().describe('Serves the WAV (Range requests too) without an API key until expiresAt.'),
  expiresAt: isoDateTime,
  recording: recordingSchema,
});
export class RecordingLinkDto extends createApiDto(recordingLinkSchema) {}

export function recordingView(recording: CallRecordingRecord): z.infer<typeof recordingSchema> {
  return {
    callId: recording.callId,
    status: recording.status,
    channels: recording.channels,
    sampleRate: recording.sampleRate,
    contentType: recording.contentType,
    durationMs: recording.durationMs,
    bytes: recording.bytes,
    startedOffsetMs: recording.startedOffsetMs,
    createdAt: recording.createdAt.toISOString(),
    completedAt: recording.completedAt?.toISOString() ?? null,
    deletedAt: recording.deletedAt?.toISOString() ?? null,
  };
}

/** The error answer for a recording that cannot be read (the tenant never sees a store's own error text). */
export function recordingUnavailable(reason: RecordingUnavailable, callId: string): HttpException {
  switch (reason) {
    case 'not_found':
      return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'recording_not_found', message: `Call ${callId} has no recording (its agent's config has recording.enabled false, or there is no such call).` });
    case 'in_progress':
      return new ConflictException({ statusCode: 409, error: 'Conflict', code: 'recording_in_progress', message: 'The call is still running or its recording is being stored; try again in a few seconds.' });
    case 'failed':
      return new ConflictException({ statusCode: 409, error: 'Conflict', code: 'recording_failed', message: 'The recording could not be stored (the server log says why).' });
    case 'deleted':
      return new GoneException({ statusCode: 410, error: 'Gone', code: 'recording_deleted', message: 'The recording was deleted (through the API or by the retention period).' });
    case 'store_not_configured':
      return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', code: 'recording_store_unavailable', message: 'The recording is kept in a store this server is not configured for.' });
  }
}

/**
 * The byte range a request asks for: undefined for the whole file (no Range header, or several
 * ranges, which are answered whole as RFC 9110 allows), 'unsatisfiable' for a range past the end.
 */
export function requestedRange(request: Request, totalBytes: number): ByteRange | undefined | 'unsatisfiable' {
  const header = request.headers.range;
  if (header === undefined) return undefined;
  const ranges = parseRange(totalBytes, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  const [range] = ranges;
  return range ? { start: range.start, end: range.end } : undefined;
}

/** Streams a recording as audio/wav: 200 whole, 206 for a range, 416 for a range past the end. */
export async function sendRecording(
  request: Request,
  response: Response,
  recording: CallRecordingRecord,
  open: (range: ByteRange | undefined) => Promise<RecordingRead>,
): Promise<void> {
  const totalBytes = recording.bytes ?? 0;
  const range = requestedRange(request, totalBytes);
  response.setHeader('accept-ranges', 'bytes');
  response.setHeader('cache-control', 'private, no-store');
  if (range === 'unsatisfiable') {
    response.status(416).setHeader('content-range', `bytes */${totalBytes}`);
    response.json({ statusCode: 416, error: 'Range Not Satisfiable', code: 'range_not_satisfiable', message: `The recording is ${totalBytes} bytes.` });
    return;
  }
  const read = await open(range);
  if (!read.ok) throw recordingUnavailable(read.reason, recording.callId);
  const { body, totalBytes: size } = read.stream;
  response.setHeader('content-type', recording.contentType);
  response.setHeader('content-disposition', `inline; filename="call-${recording.callId}.wav"`);
  if (range) {
    response.status(206);
    response.setHeader('content-range', `bytes ${range.start}-${range.end}/${size}`);
    response.setHeader('content-length', String(range.end - range.start + 1));
  } else {
    response.status(200);
    response.setHeader('content-length', String(size));
  }
  await pipeline(body, response).catch(() => {
    // The client went away mid-file (a player seeking): nothing to answer any more.
    body.destroy();
  });
}
