import { z } from 'zod';

/** An ISO 8601 time with its zone: a bare local time would mean a different instant on each server. */
export const isoTimestampText = z.iso.datetime({ offset: true });

/** The same, parsed to a Date (query and body fields that filter or schedule by time). */
export const isoTimestamp = isoTimestampText.transform((value) => new Date(value));
