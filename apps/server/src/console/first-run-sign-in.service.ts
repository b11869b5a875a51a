import { randomBytes } from 'node:crypto';
import { GoneException, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { ConsoleSignInRepository } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { generateApiKey } from '../api-keys/api-key-secret';

/** How long a first-run link works. A restart prints a new one (and retires the old) while no admin key exists. */
export const FIRST_RUN_LINK_TTL_MS = 60 * 60 * 1000;
/** The console route that claims a link; the token sits in the URL fragment, so it never reaches a server log or a Referer. */
export const FIRST_RUN_CONSOLE_ROUTE = '/#/first-run/';

export interface ClaimedFirstRunKey {
  apiKey: string;
  apiKeyId: string;
  prefix: string;
  organizationId: string;
}

/**
 * First run without ADMIN_API_KEY: instead of a server every /v1 route refuses, the log's last
 * start-up line is a one-time console link. Opening it creates the organization's admin key and shows it
 * once; the link is then spent. Only hashes are stored (of the link token and of the key).
 */
@Injectable()
export class FirstRunSignInService {
  private announcement: string | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly links: ConsoleSignInRepository,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(FirstRunSignInService.name);
  }

  /**
   * Decides this start's last line: a new one-time link while the organization has no admin key
   * (retiring the previous one), else where the console is. Returns the new link, if any; announce()
   * prints the line once the server listens.
   */
  async prepareAnnouncement(organizationId: string, now = new Date()): Promise<string | undefined> {
    const consoleUrl = `${this.config.publicBaseUrl}/`;
    if (await this.links.hasActiveAdminKey(organizationId)) {
      this.announcement = `console: ${consoleUrl} (sign in with an admin or read API key)`;
      return undefined;
    }
    const token = randomBytes(32).toString('base64url');
    await this.links.replaceLink(organizationId, token, new Date(now.getTime() + FIRST_RUN_LINK_TTL_MS));
    const link = `${this.config.publicBaseUrl}${FIRST_RUN_CONSOLE_ROUTE}${token}`;
    // The one place a credential is printed, on purpose: it works once, for an hour, and only while
    // no admin key exists. Setting ADMIN_API_KEY skips it.
    this.announcement = `first run: open ${link} to sign in (the link works once, for ${FIRST_RUN_LINK_TTL_MS / 60_000} minutes)`;
    return link;
  }

  /**
   * Prints the prepared line, once: main.ts calls it after the server listens, so that it is the
   * last line of the start. A process that prepared none (a cluster's later workers) prints nothing.
   */
  announce(): void {
    if (this.announcement !== undefined) this.logger.info(this.announcement);
    this.announcement = undefined;
  }

  /** Spends the link and returns the new admin key; 410 when it is unknown, used or expired (indistinguishable). */
  async claim(token: string, now = new Date()): Promise<ClaimedFirstRunKey> {
    const key = generateApiKey();
    const outcome = await this.links.claim(token, key, now);
    if (typeof outcome === 'string') {
      this.logger.warn({ outcome }, 'first-run sign-in link refused');
      throw new GoneException({
        statusCode: 410,
        error: 'Gone',
        code: 'sign_in_link_spent',
        message: 'This sign-in link was already used, has expired, or was replaced by a restart. Sign in with an API key, or restart the server without ADMIN_API_KEY while no admin key exists to get a new link.',
      });
    }
    this.logger.info({ apiKeyId: outcome.apiKeyId, organizationId: outcome.organizationId }, 'first-run sign-in link used: admin key created');
    return { apiKey: key.rawKey, apiKeyId: outcome.apiKeyId, prefix: key.prefix, organizationId: outcome.organizationId };
  }
}
