import { computeTwilioSignature } from '@switchboard/simulated-caller';

/** One callback the fake made (status callback, TwiML fetch, conference event), as it went. */
export interface FakeWebhookDelivery {
  /** The URL as Twilio was given it (what the signature covers). */
  url: string;
  params: Record<string, string>;
  /** HTTP status of the answer; 0 when none came (unroutable, unreachable, timed out). */
  status: number;
  body: string;
  error?: string;
}

/** A callback gets this long to be answered (Twilio's own webhook timeout is 15 s). */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Makes the fake's calls to the application, as Twilio does: a form POST signed with the account's
 * auth token over the URL as configured (X-Twilio-Signature). The fake reaches nothing but the
 * local server: URLs under `publicBaseUrl` are sent to `localBaseUrl`, others are recorded as
 * unroutable. Deliveries go one at a time, in the order they were made, so a test reads one
 * sequence of callbacks (Twilio does not promise even that; the server must not rely on it).
 */
export class FakeWebhookSender {
  readonly deliveries: FakeWebhookDelivery[] = [];
  private target: { publicBaseUrl: string; localBaseUrl: string } | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  /** Where callbacks go: the application's public base URL (as in its TwiML) and where it really listens. */
  deliverTo(publicBaseUrl: string, localBaseUrl: string): void {
    this.target = { publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''), localBaseUrl: localBaseUrl.replace(/\/+$/, '') };
  }

  send(url: string, params: Record<string, string>, authToken: string): Promise<FakeWebhookDelivery> {
    const delivery = this.queue.then(() => this.deliver(url, params, authToken));
    this.queue = delivery.catch(() => undefined);
    return delivery;
  }

  /** Resolves once every callback made so far has been answered (or failed). */
  async settled(): Promise<void> {
    let seen: Promise<unknown>;
    do {
      seen = this.queue;
      await seen;
    } while (seen !== this.queue);
  }

  private async deliver(url: string, params: Record<string, string>, authToken: string): Promise<FakeWebhookDelivery> {
    const delivery: FakeWebhookDelivery = { url, params, status: 0, body: '' };
    this.deliveries.push(delivery);
    const target = this.target;
    if (target === undefined || !url.startsWith(`${target.publicBaseUrl}/`)) {
      delivery.error = `not routable from the fake: ${url} (deliverTo() names where callbacks go)`;
      return delivery;
    }
    try {
      const response = await fetch(`${target.localBaseUrl}${url.slice(target.publicBaseUrl.length)}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
          'User-Agent': 'TwilioProxy/1.1',
          'X-Twilio-Signature': computeTwilioSignature(authToken, url, params),
        },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      delivery.status = response.status;
      delivery.body = await response.text();
    } catch (error) {
      delivery.error = (error as Error).message;
    }
    return delivery;
  }
}
