import type { AppConfig } from '@switchboard/config';
import type { PinoLogger } from 'nestjs-pino';
import type { CallAnalysisWorker } from '../analysis/call-analysis.worker';
import type { CampaignDialer } from '../campaigns/campaign-dialer';
import type { MediaStreamService } from '../twilio/media-stream/media-stream.service';
import type { WebhookDeliveryWorker } from '../webhooks/webhook-delivery.worker';
import { drainAllowanceMs, DRAIN_MESSAGE_GRACE_MS } from './drain-allowance';
import { DrainCoordinator } from './drain-coordinator';
import { ServerDrain } from './server-drain';

const silentLogger = { setContext: () => undefined, info: () => undefined, warn: () => undefined } as unknown as PinoLogger;

function coordinator(options: { timeoutMs: number; minMs?: number; liveCalls: number; callsEndAfterMs?: number; endsWithMessage?: boolean }) {
  let live = options.liveCalls;
  if (options.callsEndAfterMs !== undefined) setTimeout(() => (live = 0), options.callsEndAfterMs);
  const steps: string[] = [];
  const media = {
    get activeConnections() {
      return live;
    },
    endLiveCallsWithMessage: async (message: string) => {
      steps.push(`message:${message}`);
      if (options.endsWithMessage !== false) live = 0;
    },
  } as unknown as MediaStreamService;
  const stopper = (name: string) => () => {
    steps.push(`stop:${name}`);
    return Promise.resolve();
  };
  const state = new ServerDrain();
  const drain = new DrainCoordinator(
    { drain: { timeoutMs: options.timeoutMs, minMs: options.minMs ?? 0, message: 'Goodbye for now.' } } as AppConfig,
    state,
    media,
    { stopClaiming: stopper('webhooks') } as unknown as WebhookDeliveryWorker,
    { stopClaiming: stopper('campaigns') } as unknown as CampaignDialer,
    { stopClaiming: () => void steps.push('stop:analysis') } as unknown as CallAnalysisWorker,
    silentLogger,
  );
  return { drain, state, steps };
}

describe('DrainCoordinator', () => {
  it('marks the process draining and stops every worker claiming at once', async () => {
    const { drain, state, steps } = coordinator({ timeoutMs: 60_000, liveCalls: 0 });
    const report = await drain.drain();
    expect(state.draining).toBe(true);
    expect(steps).toEqual(['stop:webhooks', 'stop:campaigns', 'stop:analysis']);
    expect(report).toMatchObject({ callsAtStart: 0, endedWithMessage: 0 });
  });

  it('waits for live calls that end by themselves, and says nothing to anyone', async () => {
    const { drain, steps } = coordinator({ timeoutMs: 10_000, liveCalls: 2, callsEndAfterMs: 300 });
    const report = await drain.drain();
    expect(report.callsAtStart).toBe(2);
    expect(report.endedWithMessage).toBe(0);
    expect(report.durationMs).toBeLessThan(5_000);
    expect(steps.some((step) => step.startsWith('message:'))).toBe(false);
  });

  it('ends the calls still live at the bound with the drain message', async () => {
    const { drain, steps } = coordinator({ timeoutMs: 200, liveCalls: 3 });
    const report = await drain.drain();
    expect(report).toMatchObject({ callsAtStart: 3, endedWithMessage: 3 });
    expect(report.durationMs).toBeGreaterThanOrEqual(190);
    expect(steps).toContain('message:Goodbye for now.');
  });

  it('lasts at least its minimum with no call, so the load balancer sees the 503 before the port closes', async () => {
    const { drain } = coordinator({ timeoutMs: 60_000, minMs: 400, liveCalls: 0 });
    const report = await drain.drain();
    expect(report.durationMs).toBeGreaterThanOrEqual(390);
    expect(report.durationMs).toBeLessThan(2_000);
  });

  it('still waits for calls that outlast the minimum', async () => {
    const { drain } = coordinator({ timeoutMs: 60_000, minMs: 100, liveCalls: 1, callsEndAfterMs: 600 });
    const report = await drain.drain();
    expect(report.durationMs).toBeGreaterThanOrEqual(590);
    expect(report.endedWithMessage).toBe(0);
  });

  it('runs once: a second SIGTERM joins the drain under way', async () => {
    const { drain, steps } = coordinator({ timeoutMs: 100, liveCalls: 1 });
    const [first, second] = await Promise.all([drain.drain(), drain.drain()]);
    expect(second).toBe(first);
    expect(steps.filter((step) => step.startsWith('message:'))).toHaveLength(1);
  });
});

describe('drainAllowanceMs', () => {
  it('is the drain bound plus the time for the message, and nothing without a drain', () => {
    expect(drainAllowanceMs({ drain: { timeoutMs: 1_800_000, minMs: 5_000, message: 'x' } })).toBe(1_800_000 + DRAIN_MESSAGE_GRACE_MS);
    expect(drainAllowanceMs({ drain: { timeoutMs: 0, minMs: 0, message: 'x' } })).toBe(0);
  });
});
