import { Injectable } from '@nestjs/common';
import {
  WebhookDeliveryRepository,
  WebhookSubscriptionRepository,
  type CreateWebhookSubscriptionInput,
  type ListWebhookDeliveriesInput,
} from '@switchboard/persistence';

/**
 * What the webhook API does with an organization's subscriptions and its delivery log; the
 * controllers own HTTP (validation, scopes, status codes), the repositories own storage.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly deliveries: WebhookDeliveryRepository,
  ) {}

  subscribe(input: CreateWebhookSubscriptionInput) {
    return this.subscriptions.create(input);
  }

  subscriptionsOf(organizationId: string) {
    return this.subscriptions.list(organizationId);
  }

  subscription(organizationId: string, id: string) {
    return this.subscriptions.findById(organizationId, id);
  }

  /** False when the organization has no such subscription. */
  unsubscribe(organizationId: string, id: string) {
    return this.subscriptions.delete(organizationId, id);
  }

  deliveryLog(input: ListWebhookDeliveriesInput) {
    return this.deliveries.list(input);
  }

  delivery(organizationId: string, id: string) {
    return this.deliveries.findDetail(organizationId, id);
  }

  /** The new pending delivery, or null when the organization has no such delivery. */
  replay(organizationId: string, id: string) {
    return this.deliveries.replay(organizationId, id);
  }
}
