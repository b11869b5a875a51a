import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { SecretKeyRing } from '@switchboard/secrets';
import { SECRET_KEY_RING } from '../secrets/secret-key-ring.provider';

/** The longest a signed recording link may live. */
export const RECORDING_LINK_MAX_TTL_S = 3600;

/**
 * Short-lived links to one call's recording that work without an API key (an <audio> element, a
 * CRM that fetches the file): `/recordings/<callId>.wav?expires=<unix s>&signature=<hex>`, an
 * HMAC-SHA256 over the call id and the expiry. The HMAC key is derived (HKDF) from the secrets
 * encryption key, so every process and instance that shares the database accepts the same links
 * and nothing new needs configuring; a rotated key ends the links made with the old one.
 */
@Injectable()
export class RecordingLinkSigner {
  private readonly key: Buffer;

  constructor(@Inject(SECRET_KEY_RING) ring: SecretKeyRing) {
    const secret = ring.keyFor(ring.activeKeyId);
    if (!secret) throw new Error('the secrets key ring has no active key');
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'switchboard recording links v1', 32));
  }

  sign(callId: string, expiresAtS: number): string {
    return createHmac('sha256', this.key).update(`${callId}.${expiresAtS}`).digest('hex');
  }

  /** True when the signature is ours for this call and the link has not expired. */
  verify(callId: string, expiresAtS: number, signature: string, nowMs: number): boolean {
    if (!Number.isSafeInteger(expiresAtS) || expiresAtS * 1000 < nowMs) return false;
    if (expiresAtS * 1000 > nowMs + (RECORDING_LINK_MAX_TTL_S + 60) * 1000) return false;
    const expected = Buffer.from(this.sign(callId, expiresAtS), 'hex');
    const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
