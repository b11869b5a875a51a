import { NestFactory } from '@nestjs/core';
import { json } from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '@switchboard/config';
import type { DestinationStream } from 'pino';
import { SCENARIO_SUITE_BODY_LIMIT, SCENARIO_SUITE_ROUTE } from './agent-tests/scenario-suite.schema';
import { AppModule } from './app.module';
import { CAMPAIGN_BODY_LIMIT, CAMPAIGNS_ROUTE } from './campaigns/campaign-requests.schema';
import { serveConsole } from './console/console-static';
import { NestLogLevels } from './logging/nest-log-levels';
import { MediaUpgradeVerifier } from './twilio/media-stream/media-upgrade.verifier';
import { serveOpenApiDocument } from './openapi/openapi-document';
import { TwilioMediaWsAdapter } from './twilio/media-stream/twilio-media-ws.adapter';

/**
 * Builds the fully wired server (not yet listening). Shared by main.ts and the end-to-end tests,
 * so the tests exercise exactly what production runs.
 */
export async function createServerApp(config: AppConfig, options: { logDestination?: DestinationStream } = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options.logDestination), {
    bufferLogs: true,
    // Our own parsers: Twilio posts flat form fields, so `extended: false` keeps names literal.
    bodyParser: false,
  });
  app.useLogger(app.get(NestLogLevels));
  // Behind a load balancer every request comes from its address: TRUST_PROXY names the proxies whose
  // X-Forwarded-For says who the client is (the anonymous rate limit is per client address).
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);
  // Node's default (5 s) is shorter than load balancers keep their connections to an instance: one
  // reused just as the server closes it loses its request. Idle connections still close at shutdown.
  app.getHttpServer().keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  app.useBodyParser('urlencoded', { extended: false, limit: '64kb' });
  // Scenario test suites may carry recorded caller turns (base64 WAVs): their one route gets a larger
  // bound. Registered first, so the general parser below finds the body already read.
  app.use(SCENARIO_SUITE_ROUTE, json({ limit: SCENARIO_SUITE_BODY_LIMIT }));
  // So do campaigns (up to 10 000 contacts, or a CSV of up to 4 MiB, in the JSON body).
  app.use(CAMPAIGNS_ROUTE, json({ limit: CAMPAIGN_BODY_LIMIT }));
  app.useBodyParser('json', { limit: '256kb' });
  app.useWebSocketAdapter(new TwilioMediaWsAdapter(app, app.get(MediaUpgradeVerifier)));
  serveOpenApiDocument(app);
  serveConsole(app);
  // SIGINT (Ctrl-C) stops at once: live calls are ended and stored. SIGTERM, what an orchestrator
  // sends, drains first: main.ts runs the DrainCoordinator, then closes the application.
  app.enableShutdownHooks(['SIGINT']);
  return app;
}
