// What every call recorded from a Twilio webhook starts with: its identity, the checks on it, and its first columns.
import type { Prisma } from '../generated/prisma/client';
import { invalidInput } from '../persistence.errors';
import { isTwilioCallStatus } from './call-status';

export interface TwilioCallIdentity {
  twilioCallSid: string;
  twilioAccountSid: string;
  fromNumber: string;
  toNumber: string;
  /** Twilio CallStatus from the incoming-call webhook, usually 'ringing'. */
  status: string;
  /** When the incoming-call webhook arrived (default: now); becomes the call's startedAt. */
  at?: Date;
}

export interface CreateInboundCallInput extends TwilioCallIdentity {
  organizationId: string;
  agentId: string;
  agentConfigVersion: number;
  /** sha256 of the one-time media-stream token handed to Twilio in the TwiML. */
  streamTokenHash: string;
  streamTokenExpiresAt: Date;
}

export interface CreateRejectedCallInput extends TwilioCallIdentity {
  /** Null when no organization owns the dialled number. */
  organizationId?: string | null;
  agentId?: string | null;
  endReason: string;
}

export function assertCallIdentity(input: TwilioCallIdentity): void {
  for (const field of ['twilioCallSid', 'twilioAccountSid', 'fromNumber', 'toNumber'] as const) {
    if (input[field].trim().length === 0) throw invalidInput(`${field} must not be empty`);
  }
  if (!isTwilioCallStatus(input.status)) throw invalidInput(`Unknown Twilio CallStatus '${input.status}'`);
}

/** The columns every call answered from a Twilio webhook starts with. */
export function callIdentityData(input: TwilioCallIdentity) {
  const startedAt = input.at ?? new Date();
  return {
    twilioCallSid: input.twilioCallSid,
    twilioAccountSid: input.twilioAccountSid,
    direction: 'inbound',
    fromNumber: input.fromNumber,
    toNumber: input.toNumber,
    status: input.status,
    startedAt,
    statusTimeline: [{ status: input.status, at: startedAt.toISOString(), sequenceNumber: null }],
  } satisfies Partial<Prisma.CallUncheckedCreateInput>;
}
