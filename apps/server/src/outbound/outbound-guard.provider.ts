import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import type { RemoteFetch } from '@switchboard/inference';
import { OutboundGuard } from '@switchboard/net';

/**
 * The process's one outbound guard: every request made on a tenant's behalf (webhook tools, webhook
 * deliveries, remote engines, realtime sockets) goes through it. OUTBOUND_ALLOWED_HOSTS is parsed
 * at start-up, so a bad entry stops the server with a clear message.
 */
@Injectable()
export class TenantOutbound implements OnApplicationShutdown {
  readonly guard: OutboundGuard;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.guard = new OutboundGuard({ allowedHosts: config.outbound.allowedHosts });
  }

  /**
   * The guard's fetch in the shape every caller here takes (engines, tools, webhook deliveries):
   * the global fetch's types, a deadline for the whole exchange, never a redirect.
   */
  readonly fetch = (url: string, init: RequestInit & { timeoutMs: number }): Promise<Response> =>
    this.guard.fetch(url, init as Parameters<OutboundGuard['fetch']>[1]);

  /**
   * The guard's request (undici's lean API) in the shape remote engines take: their three requests
   * a turn are the hottest outbound path, where fetch's web streams cost measurable event loop.
   */
  readonly request: RemoteFetch = (url, init) => this.guard.request(url, init);

  async onApplicationShutdown(): Promise<void> {
    await this.guard.close();
  }
}
