/**
 * The console as a newcomer uses it, in real Chromium: the server started as its own process with
 * no ADMIN_API_KEY prints a one-time link; the link shows the admin key once and enters the
 * console; an agent is created through the form generated from the config's JSON Schema (a bad
 * value is shown at its field first), edited into version 2, and its versions shown side by side;
 * a call placed by the simulated Twilio caller appears in the calls list while it is live and ends
 * there without a reload, with its agent, duration, cost and end reason in words; its page shows the
 * post-call analysis (re-run by an admin), the transcript, the latency waterfall and the cost ledger;
 * an outbound campaign is created through its form (a CSV with a malformed number first, its line
 * shown), then paused, resumed and cancelled from its page; a read key sees the same lists without
 * any write control. Talk (a browser call with a fake microphone) shows the microphone and the agent
 * speaking and the caller's words in the live transcript; a browser call whose agent fails says why
 * in words and is marked an error in the calls list. Screenshots go to test/artifacts/ (three of
 * them, console-talk, console-calls and console-call-page, are committed).
 */
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav, sineTone, writeWav } from '@switchboard/audio';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { FakeOpenAiServer, FakeTwilioRestServer, freeLoopbackPort, type RecordedRequest } from '@switchboard/testing';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { speechFixture } from '../support/conversation-agents';
import { BuiltServer } from '../support/built-server';

jest.setTimeout(240_000);

/** What the spec reads of the page's <audio> element (the specs are compiled without the DOM's types). */
interface AudioElement {
  readyState: number;
  duration: number;
  currentTime: number;
  currentSrc: string;
  src: string;
  error: unknown;
  addEventListener(type: string, listener: () => void, options: { once: boolean }): void;
}

const ARTIFACTS = join(__dirname, '..', 'artifacts');
const LINK_LINE = /first run: open (http:\/\/localhost:\d+\/#\/first-run\/[A-Za-z0-9_-]+) to sign in/;
const TWILIO_AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
/** The operator's Twilio account: the simulated caller's webhooks are signed for it, and campaigns need its SID to be created. */
const TWILIO_ACCOUNT_SID = `AC${'0'.repeat(32)}`;
const AGENT_NUMBER = '+15551239876';
/** What the fake LLM answers the post-call analysis, and what each analysis request costs. */
const ANALYSIS_ANSWER = { summary: 'The caller asked when the store opens.', structuredData: { intent: 'opening_hours' }, success: true, successReason: 'The agent said nine.' };
const ANALYSIS_USAGE = { promptTokens: 310, completionTokens: 45 };
/** A total as the console shows money: cents, or "< 0.01" for a call that cost less than a cent. */
const MONEY_TOTAL = /^(\d+\.\d\d|< 0\.01) USD$/;

/** A post-call analysis request (its first message is the analysis instructions), not a turn of a call. */
function isAnalysis(request: RecordedRequest): boolean {
  const messages = (request.json as { messages?: Array<{ role: string; content: string | null }> }).messages ?? [];
  return messages[0]?.role === 'system' && String(messages[0].content).startsWith('You analyse a finished phone call');
}

describe('the console in Chromium: first-run link, agents form, read-only key (e2e, the built console served by the server)', () => {
  let server: BuiltServer;
  let browser: Browser;
  let dataDir: string;
  let baseUrl: string;
  let engines: FakeOpenAiServer;
  /** Twilio's REST API for the operator's account (no campaign call may reach it: their calling windows are closed). */
  let twilioRest: FakeTwilioRestServer;
  /** A business's webhook endpoint: records what arrives, answers 200. */
  let receiver: Server;
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  /** The admin key the first-run link gave (the link works once, so later tests reuse it). */
  let adminKey = '';
  /** How long the fake TTS speaks: short for a reply that plays out, long for one to barge in on. */
  let replyMs = 1500;

  const screenshot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `console-${name}.png`), fullPage: true });

  beforeAll(async () => {
    // The console the server serves is the one built from these sources (npm run build does the same).
    execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'apps/console/vite.config.mjs', '--logLevel', 'error'], { stdio: 'inherit' });
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freeLoopbackPort();
    baseUrl = `http://localhost:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-console-'));
    engines = await FakeOpenAiServer.start({
      transcription: () => ({ text: 'What time do you open tomorrow?' }),
      chat: (request) =>
        isAnalysis(request) ? { text: [JSON.stringify(ANALYSIS_ANSWER)], usage: ANALYSIS_USAGE } : { text: ['We open at nine', ' in the morning.'], usage: { promptTokens: 40, completionTokens: 9 } },
      speech: () => ({ pcm: sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: replyMs, amplitudeDbfs: -12 }), chunkBytes: [4801, 1234] }),
    });
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    twilioRest = await FakeTwilioRestServer.start({ accountSid: TWILIO_ACCOUNT_SID, authToken: TWILIO_AUTH_TOKEN, acceptUnknownCalls: true });
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: '',
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      ADMIN_API_KEY: '',
      TWILIO_AUTH_TOKEN,
      TWILIO_ACCOUNT_SID,
      TWILIO_API_BASE_URL: twilioRest.baseUrl,
      OPENAI_API_KEY: '',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      WORKERS: '1',
      LOG_FORMAT: 'json',
      // The post-call analysis runs in the server (its default), looking for queued jobs often.
      ANALYSIS_WORKER_ENABLED: 'true',
      ANALYSIS_POLL_INTERVAL_MS: '200',
    });
    await server.healthy(`http://127.0.0.1:${port}`, 150_000);
    browser = await launchChromium();
  }, 200_000);

  afterAll(async () => {
    await browser?.close();
    await engines?.close();
    await twilioRest?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs in through the printed link, creates an agent through the form, and hides writes from a read key', async () => {
    const link = LINK_LINE.exec(server.output)?.[1];
    expect(link).toBeDefined();
    const page = await browser.newPage();
    const failedRequests: string[] = [];
    /** The recording's WAV as the page's audio element fetched it (path and query). */
    const wavResponses: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 500) failedRequests.push(`${response.status()} ${response.url()}`);
      const url = new URL(response.url());
      if (url.pathname.startsWith('/recordings/') && [200, 206].includes(response.status())) wavResponses.push(url.pathname + url.search);
    });

    // The link: the key is shown once, and the token left the address bar.
    await page.goto(link as string);
    const shownKey = (await page.getByTestId('new-api-key').textContent()) ?? '';
    adminKey = shownKey;
    expect(shownKey).toMatch(/^sk_live_/);
    expect(page.url()).not.toContain(link!.split('/#/first-run/')[1] as string);
    // The first run's agents, and how to get one that converses (this server has no OPENAI_API_KEY).
    const firstRunAgents = (await page.getByTestId('first-run-agents').textContent()) ?? '';
    expect(firstRunAgents).toContain('Echo (talk to yourself)');
    expect(firstRunAgents).toContain('set OPENAI_API_KEY (or store your key with npm run secrets -- set openai-api-key) and restart the server');
    await screenshot(page, 'first-run');
    await page.getByRole('button', { name: /open the console/ }).click();
    // A first run makes an echo agent, so there is something to talk to at once.
    await page.getByTestId('agents-table').getByText('Echo (talk to yourself)').waitFor();
    await expect(page.getByTestId('signed-in-as').textContent()).resolves.toContain('admin');

    // The form generated from the config's JSON Schema: a value out of range is refused by the
    // server and shown at its field, the JSON view holds the same config, a good value creates it.
    await page.getByRole('button', { name: 'New agent' }).click();
    const form = page.getByTestId('new-agent-form');
    await form.getByLabel('Name').fill('Front desk');
    await form.getByLabel('Engine').selectOption('pipeline');
    // Only the fields the engine reads: a pipeline agent has no realtime section.
    expect(await form.locator('[data-path="realtime"]').count()).toBe(0);
    // The agent's own LLM (the analysis section has an LLM of its own).
    const llmSection = form.locator('[data-path="llm"]');
    await llmSection.locator('summary').first().click();
    const temperature = form.locator('[data-path="llm.temperature"]').getByLabel('Temperature');
    await temperature.fill('3');
    await form.getByRole('button', { name: 'Create' }).click();
    const temperatureError = form.locator('[data-path="llm.temperature"] .field-errors');
    await temperatureError.waitFor();
    await expect(temperatureError.textContent()).resolves.toMatch(/<=\s*2/);
    await expect(form.getByTestId('config-problems').textContent()).resolves.toContain('One problem is marked at its field');
    await screenshot(page, 'agent-form-error');
    await temperature.fill('0.4');
    await form.getByRole('button', { name: 'JSON' }).click();
    expect(JSON.parse(await form.getByLabel('Config (JSON)').inputValue())).toMatchObject({ llm: { temperature: 0.4 }, turn: { minSilenceMs: 500 } });
    await form.getByRole('button', { name: 'Form' }).click();
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByTestId('agents-table').getByText('Front desk').waitFor();
    await screenshot(page, 'agents');

    // Its page: an edit through the form saves version 2, and versions 1 and 2 show side by side
    // with the changed line marked on each side.
    await page.getByTestId('agents-table').getByRole('link', { name: 'Front desk' }).click();
    await expect(page.getByTestId('agent-version').textContent()).resolves.toBe('1');
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByTestId('edit-agent-form');
    await edit.locator('summary', { hasText: 'Turn' }).click();
    await expect(edit.getByLabel('Min silence (ms)').inputValue()).resolves.toBe('500');
    await edit.getByLabel('Min silence (ms)').fill('700');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('agent-version').getByText('2').waitFor();
    const diff = page.getByTestId('config-diff');
    await diff.waitFor();
    await expect(diff.locator('thead').textContent()).resolves.toMatch(/Version 1\s*Version 2/);
    const changed = diff.locator('tr.diff-changed');
    await expect(changed.count()).resolves.toBe(1);
    await expect(changed.locator('td.diff-old').textContent()).resolves.toContain('"minSilenceMs": 500');
    await expect(changed.locator('td.diff-new').textContent()).resolves.toContain('"minSilenceMs": 700');
    await expect(diff.locator('tr.diff-same').count()).resolves.toBeGreaterThan(20);
    await screenshot(page, 'agent-versions');

    // A pipeline agent on a number (through the API), then a call to it while the calls page is open.
    const admin = { authorization: `Bearer ${shownKey}`, 'content-type': 'application/json' };
    const remote = { provider: 'openai', baseUrl: engines.baseUrl };
    const agentResponse = await fetch(`${baseUrl}/v1/agents`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'Opening hours', engine: 'pipeline', config: { firstMessage: null, stt: { ...remote, model: 'whisper-1' }, llm: { ...remote, model: 'gpt-test' }, tts: { ...remote, model: 'tts-test', voice: 'alloy' } } }),
    });
    expect(agentResponse.status).toBe(201);
    const { id: agentId } = (await agentResponse.json()) as { id: string };
    // It records and analyses its calls: a PATCH with `config` replaces the whole config, so send the stored one with recording and analysis on.
    const stored = (await (await fetch(`${baseUrl}/v1/agents/${agentId}`, { headers: admin })).json()) as { config: Record<string, unknown> };
    const analysis = {
      enabled: true,
      summaryPrompt: 'Say why the caller called.',
      structuredData: { type: 'object', properties: { intent: { type: 'string' } }, required: ['intent'] },
      successCriteria: 'The caller learnt the opening hours.',
    };
    const recordingOn = await fetch(`${baseUrl}/v1/agents/${agentId}`, {
      method: 'PATCH',
      headers: admin,
      body: JSON.stringify({ config: { ...stored.config, recording: { enabled: true, channels: 'dual' }, analysis } }),
    });
    expect(recordingOn.status).toBe(200);
    expect(((await recordingOn.json()) as { version: number }).version).toBe(2);
    // Its number, bound in the console: a malformed one is refused with the rule, then the right one shows in the row.
    await page.getByRole('link', { name: 'Calls' }).click();
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('button', { name: 'Bind a number to Opening hours' }).click();
    await page.getByLabel('Number for Opening hours').fill('555-1234');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText(/E\.164/).waitFor();
    await page.getByLabel('Number for Opening hours').fill(AGENT_NUMBER);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId(`numbers-${agentId}`).getByText(AGENT_NUMBER).waitFor();

    // A webhook subscription for call.ended, through the console; its secret is shown once.
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/switchboard`;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('Nothing sent yet.').waitFor();
    await page.getByTestId('new-subscription-form').getByLabel('URL').fill(hookUrl);
    await page.getByTestId('new-subscription-form').getByRole('button', { name: 'Add' }).click();
    await expect(page.getByTestId('webhook-secret').textContent()).resolves.toMatch(/^whsec_/);
    await page.getByTestId('subscriptions').getByText(hookUrl).waitFor();

    await page.getByRole('link', { name: 'Calls' }).click();
    await page.getByText('No calls yet.').waitFor();
    await page.getByTestId('feed-state').getByText('live').waitFor();
    const call = new SimulatedTwilioCall({ serverUrl: baseUrl, publicBaseUrl: baseUrl, authToken: TWILIO_AUTH_TOKEN, accountSid: TWILIO_ACCOUNT_SID, from: '+15557654321', to: AGENT_NUMBER });
    const twiml = await call.dial();
    const callId = twiml.stream?.parameters['callId'] as string;
    await call.connectMedia();
    // Appears while live, without a reload.
    await page.locator(`tr[data-call-id="${callId}"]`).getByText('(live)').waitFor({ timeout: 15_000 });
    await screenshot(page, 'calls-live');
    const spoke = await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    // The caller stays on until the reply (paced to real time) has played to its end, however long that takes here.
    expect((await call.waitForReplyEnd(spoke.audibleEndedAtMs ?? 0, { tailMs: 100, timeoutMs: 20_000 })).outcome).toBe('ended');
    await call.hangup();
    // As Twilio does after the caller hangs up: the final status callback.
    await call.sendStatusCallback('completed');
    const row = page.locator(`tr[data-call-id="${callId}"]`);
    await row.getByText('completed').waitFor({ timeout: 15_000 });
    // Why it ended, in words (the API's reason in the title); who took it, how long, what it cost.
    const endReason = row.locator('[data-column="end-reason"]');
    await endReason.getByText('hung up').waitFor();
    await expect(endReason.locator('span').getAttribute('title')).resolves.toBe('stream_stopped');
    await expect(page.getByTestId('calls-table').locator('thead th').allTextContents()).resolves.toEqual(['Started', 'Agent', 'Direction', 'From', 'To', 'Status', 'Duration', 'Cost', 'End reason']);
    await row.locator('[data-column="agent"]').getByText('Opening hours', { exact: true }).waitFor();
    await expect(row.locator('[data-column="duration"]').textContent()).resolves.toMatch(/^\d+:\d\d$/);
    await row.locator('[data-column="cost"]').getByText(MONEY_TOTAL).waitFor({ timeout: 15_000 });

    // The call page: transcript, one waterfall per reply, the priced ledger.
    await page.locator(`tr[data-call-id="${callId}"] a`).click();
    await page.getByTestId('transcript').getByText('What time do you open tomorrow?').waitFor();
    await page.getByTestId('transcript').getByText('We open at nine in the morning.').waitFor();
    await page.getByTestId('latency-waterfall').locator('svg').waitFor();
    await expect(page.getByTestId('latency-waterfall').textContent()).resolves.toContain('ASR');
    await page.getByTestId('cost-ledger').getByText('stt').waitFor({ timeout: 15_000 });
    await expect(page.getByTestId('call-total').textContent()).resolves.toMatch(MONEY_TOTAL);
    await expect(page.getByTestId('ledger-total').textContent()).resolves.toMatch(MONEY_TOTAL);
    // The agent's name comes with its own read of the agent.
    await page.getByTestId('call-agent').getByRole('link', { name: 'Opening hours' }).waitFor();
    await expect(page.getByTestId('call-title').textContent()).resolves.toBe(`Call from +15557654321 to Opening hours (${AGENT_NUMBER})`);
    await expect(page.getByTestId('call-duration').textContent()).resolves.toMatch(/^\d+:\d\d$/);
    await screenshot(page, 'call');

    // Its post-call analysis (the fake LLM's answer): the summary, the verdict and the extracted data.
    const analysisPanel = page.getByTestId('call-analysis');
    await analysisPanel.getByText(ANALYSIS_ANSWER.summary).waitFor({ timeout: 20_000 }); // the page refreshes every 2 s while it runs
    await expect(analysisPanel.getByTestId('analysis-verdict').textContent()).resolves.toBe('Success: The agent said nine.');
    const intentRow = analysisPanel.getByTestId('analysis-data').locator('tr', { hasText: 'intent' });
    await expect(intentRow.locator('td').allTextContents()).resolves.toEqual(['intent', 'opening_hours']);
    await expect(analysisPanel.getByTestId('analysis-facts').textContent()).resolves.toMatch(/^gpt-test · 310 input \+ 45 output tokens · completed /);
    expect(await analysisPanel.getByTestId('analysis-data-errors').count()).toBe(0);
    await screenshot(page, 'call-analysis');

    // Its recording plays in the page (from a same-origin /recordings/ link, without an API key),
    // and the turn being heard is marked in the transcript.
    const audio = page.getByTestId('recording-audio');
    await audio.waitFor({ timeout: 35_000 }); // stored within seconds of the call's end; the player asks again every 2 s
    const metadata = await audio.evaluate(
      (element: AudioElement) =>
        new Promise<{ readyState: number; duration: number }>((resolve) => {
          const done = () => resolve({ readyState: element.readyState, duration: element.duration });
          if (element.readyState >= 1) done();
          element.addEventListener('loadedmetadata', done, { once: true });
          setTimeout(done, 10_000);
        }),
    );
    expect(metadata.readyState).toBeGreaterThanOrEqual(1); // HAVE_METADATA
    expect(metadata.duration).toBeGreaterThan(1);
    expect(await audio.evaluate((element: AudioElement) => new URL(element.currentSrc).pathname)).toBe(`/recordings/${callId}.wav`);
    expect(wavResponses.some((response) => response.startsWith(`/recordings/${callId}.wav?`))).toBe(true);
    await expect(page.getByTestId('recording-facts').textContent()).resolves.toContain('stereo: caller left, agent right');
    expect(await page.getByRole('button', { name: 'Delete recording' }).count()).toBe(1);
    const detail = (await (await fetch(`${baseUrl}/v1/calls/${callId}`, { headers: admin })).json()) as { transcript: Array<{ index: number; role: string; startMs: number; endMs: number }> };
    const recordingLink = (await (await fetch(`${baseUrl}/v1/calls/${callId}/recording/link`, { headers: admin })).json()) as { recording: { startedOffsetMs: number; durationMs: number } };
    const { startedOffsetMs } = recordingLink.recording;
    const answer = detail.transcript.find((turn) => turn.role === 'assistant');
    const question = detail.transcript.find((turn) => turn.role === 'user');
    expect(answer && question).toBeTruthy();
    const inAnswerS = ((answer!.startMs + answer!.endMs) / 2 - startedOffsetMs) / 1000;
    expect(inAnswerS * 1000).toBeLessThan(recordingLink.recording.durationMs);
    await audio.evaluate(
      (element: AudioElement, at: number) =>
        new Promise<void>((resolve) => {
          element.addEventListener('seeked', () => resolve(), { once: true });
          element.currentTime = at;
        }),
      inAnswerS,
    );
    const heard = page.getByTestId('transcript').locator('li[aria-current="true"]');
    await heard.and(page.locator(`[data-turn-index="${answer!.index}"]`)).waitFor();
    await expect(heard.count()).resolves.toBe(1);
    await expect(heard.textContent()).resolves.toContain('We open at nine in the morning.');
    await screenshot(page, 'call-recording');
    // Clicking a turn moves the playhead to its start.
    await page.getByTestId('transcript').locator(`li[data-turn-index="${question!.index}"]`).click();
    await page.getByTestId('transcript').locator(`li[data-turn-index="${question!.index}"][aria-current="true"]`).waitFor();
    const playheadS = await audio.evaluate((element: AudioElement) => element.currentTime);
    expect(playheadS).toBeCloseTo((question!.startMs - startedOffsetMs) / 1000, 1);
    // A link that no longer works (an expired one; here an altered one, refused the same way) is replaced by a fresh one when the audio errors.
    const firstSrc = await audio.evaluate((element: AudioElement) => element.currentSrc);
    const refused = `/recordings/${callId}.wav?expires=1&signature=${'0'.repeat(64)}`;
    await audio.evaluate((element: AudioElement, src: string) => (element.src = src), refused);
    const replacedBy = Date.now() + 10_000;
    for (;;) {
      const now = await audio.evaluate((element: AudioElement) => ({ src: element.currentSrc, readyState: element.readyState, failed: element.error !== null }));
      if (!now.src.endsWith(refused) && now.src !== firstSrc && now.readyState >= 1 && !now.failed) break;
      if (Date.now() > replacedBy) throw new Error(`the refused link was not replaced: ${JSON.stringify(now)}`);
      await page.waitForTimeout(200);
    }
    expect(await page.getByTestId('recording').getByRole('alert').count()).toBe(0);

    // An admin re-runs the analysis (after a confirmation): the page follows it to its new result, which counts the tokens of both runs.
    page.once('dialog', (dialog) => void dialog.accept());
    await analysisPanel.getByRole('button', { name: 'Re-run analysis' }).click();
    await analysisPanel.getByTestId('analysis-facts').getByText(/620 input \+ 90 output tokens/).waitFor({ timeout: 20_000 });
    await expect(analysisPanel.getByTestId('analysis-summary').textContent()).resolves.toBe(ANALYSIS_ANSWER.summary);
    expect(await analysisPanel.getByRole('alert').count()).toBe(0);

    // Usage: the month's spend per day and per agent, the budget, and the CSV.
    await page.getByRole('link', { name: 'Usage' }).click();
    await expect(page.getByTestId('budget').textContent()).resolves.toMatch(/USD spent, no budget set/);
    // ...and what admission sees: refusals, and this server's inference workers (the count the API gives).
    const organization = (await (await fetch(`${baseUrl}/v1/organization`, { headers: admin })).json()) as {
      refusedCallsLast24h: number;
      inferenceCapacity: { workers: number };
    };
    await expect(page.getByTestId('budget').getByTestId('refused-calls').textContent()).resolves.toMatch(new RegExp(`^${organization.refusedCallsLast24h} in the last 24 hours`));
    expect(organization.inferenceCapacity.workers).toBeGreaterThan(0);
    await expect(page.getByTestId('inference-capacity').textContent()).resolves.toMatch(
      new RegExp(`^\\d+ % of ${organization.inferenceCapacity.workers} inference workers? busy over the last 30 s`),
    );
    await page.getByTestId('spend-per-day').locator('svg').waitFor();
    await expect(page.getByTestId('spend-per-agent').textContent()).resolves.toContain('Opening hours');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'per agent' }).click()]);
    const csv = readFileSync((await download.path()), 'utf8');
    expect(csv.split('\n')[0]).toBe('group,label,currency,calls,quantity,unit,amount_micros,amount');
    expect(csv).toContain(`${agentId},Opening hours,USD,1,`);
    await screenshot(page, 'usage');

    // The delivery log: call.ended was delivered (200 on the first attempt); a replay sends the same webhook-id again.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const delivery = page.getByTestId('deliveries').locator('tr', { hasText: 'call.ended' });
    await delivery.getByText('delivered').waitFor({ timeout: 15_000 });
    await delivery.getByRole('button', { name: 'Attempts' }).click();
    await page.getByTestId('attempts').getByText('200').waitFor();
    await delivery.getByRole('button', { name: 'Replay' }).click();
    const deadline = Date.now() + 15_000;
    while (received.filter((request) => request.body.includes('"call.ended"')).length < 2) {
      if (Date.now() > deadline) throw new Error(`the replay did not arrive: ${received.length} requests`);
      await page.waitForTimeout(200);
    }
    const [original, replayed] = received.filter((request) => request.body.includes('"call.ended"'));
    expect(replayed?.headers['webhook-id']).toBe(original?.headers['webhook-id']);
    await screenshot(page, 'webhooks');

    // An outbound campaign through its form, calling only on a weekday three days from now (UTC):
    // nobody is called. A malformed number in the CSV is refused first, named by its line.
    const dayNames = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const closedDay = dayNames[(new Date().getUTCDay() + 3) % 7] as string;
    await page.getByRole('link', { name: 'Campaigns', exact: true }).click();
    await page.getByText('No campaigns yet.').waitFor();
    await page.getByRole('link', { name: 'New campaign' }).click();
    const campaignForm = page.getByTestId('new-campaign-form');
    await campaignForm.getByLabel('Name').fill('Opening reminders');
    await campaignForm.getByLabel('Agent', { exact: true }).selectOption({ label: 'Opening hours' });
    await campaignForm.getByLabel('From number', { exact: true }).selectOption(AGENT_NUMBER);
    await campaignForm.getByLabel('Contacts (CSV)').fill('to,timeZone,firstName\n+15550001001,,Ada\n555-0100,,Grace\n');
    await campaignForm.getByLabel('Time zone').fill('UTC');
    for (const day of dayNames) await campaignForm.getByRole('checkbox', { name: day, exact: true }).setChecked(day === closedDay);
    await campaignForm.getByLabel(`${closedDay} from`).fill('10:00');
    await campaignForm.getByLabel('Max concurrent calls').fill('2');
    await campaignForm.getByRole('button', { name: 'Create campaign' }).click();
    const csvProblems = campaignForm.getByTestId('csv-problems');
    await csvProblems.waitFor();
    await expect(csvProblems.textContent()).resolves.toBe('Line 3, column to: must be an E.164 number, e.g. +14155550100 555-0100,,Grace');
    await expect(campaignForm.getByRole('alert').last().textContent()).resolves.toBe('Not created: the problem is marked at its field.');
    await screenshot(page, 'campaign-form-error');
    await campaignForm.getByLabel('Contacts (CSV)').fill('to,timeZone,firstName\n+15550001001,,Ada\n+15550001002,America/New_York,Grace\n');
    await campaignForm.getByRole('button', { name: 'Create campaign' }).click();
    // Its page: both contacts pending, then paused, resumed and cancelled by the admin.
    const campaignStatus = page.getByTestId('campaign-status');
    await campaignStatus.getByText('running').waitFor();
    expect(page.url()).toMatch(/#\/campaigns\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId('campaign-schedule').textContent()).resolves.toMatch(/^UTC: from .*, no end$/);
    const contactRows = page.getByTestId('contacts-table').locator('tbody tr');
    await expect(contactRows.locator('td.contact-status').allTextContents()).resolves.toEqual(['pending', 'pending']);
    await expect(page.getByTestId('counts-by-status').locator('tr[data-status="pending"] td').last().textContent()).resolves.toBe('2');
    await expect(page.getByTestId('campaign-progress').textContent()).resolves.toBe('0/2 done');
    await page.getByRole('button', { name: 'Pause' }).click();
    await campaignStatus.getByText('paused (by an admin)').waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await campaignStatus.getByText('running').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await campaignStatus.getByText('cancelled (by an admin)').waitFor();
    await contactRows.filter({ hasText: '+15550001002' }).locator('td.contact-status', { hasText: 'cancelled' }).waitFor();
    await expect(contactRows.locator('td.contact-status').allTextContents()).resolves.toEqual(['cancelled', 'cancelled']);
    await expect(page.getByTestId('counts-by-status').locator('tr[data-status="cancelled"] td').last().textContent()).resolves.toBe('2');
    expect(await page.getByRole('button', { name: /^(Pause|Resume|Cancel campaign)$/ }).count()).toBe(0);
    await screenshot(page, 'campaign');
    expect(twilioRest.requestsFor('create_call')).toEqual([]);
    await page.getByRole('link', { name: '← Campaigns' }).click();
    await page.getByTestId('campaigns-table').locator('tr', { hasText: 'Opening reminders' }).getByText('cancelled (by an admin)').waitFor();
    await screenshot(page, 'campaigns');

    // A read key: same lists, no write control.
    const created = await fetch(`${baseUrl}/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shownKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'dashboard', scopes: ['read'] }),
    });
    expect(created.status).toBe(201);
    const { key: readKey } = (await created.json()) as { key: string };
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill('sk_live_not_a_real_key_000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That key is unknown or revoked.').waitFor();
    await page.getByLabel('API key').fill(readKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('agents-table').getByText('Front desk').waitFor();
    await expect(page.getByTestId('signed-in-as').textContent()).resolves.toContain('read only');
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Bind a number/ }).count()).toBe(0);
    // The agent's page: its versions side by side, but no edit.
    await page.getByTestId('agents-table').getByRole('link', { name: 'Front desk' }).click();
    await page.getByTestId('config-diff').locator('tr.diff-changed').waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByTestId('edit-agent-form').count()).toBe(0);
    await screenshot(page, 'read-only-agent');
    await page.getByRole('link', { name: 'Calls' }).click();
    await page.getByTestId('calls-table').waitFor();
    await screenshot(page, 'read-only-calls');
    // Campaigns: listed, but none can be started.
    await page.getByRole('link', { name: 'Campaigns', exact: true }).click();
    await page.getByTestId('campaigns-table').getByText('Opening reminders').waitFor();
    expect(await page.getByRole('link', { name: 'New campaign' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'New campaign' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Calls' }).click();
    await page.getByTestId('calls-table').waitFor();
    // A call's page: the recording plays, but cannot be deleted.
    await page.locator(`tr[data-call-id="${callId}"] a`).click();
    await page.getByTestId('recording-audio').waitFor();
    await page.getByTestId('recording-facts').waitFor();
    expect(await page.getByRole('button', { name: 'Delete recording' }).count()).toBe(0);
    // ...and its analysis shows, but cannot be re-run.
    await page.getByTestId('call-analysis').getByText(ANALYSIS_ANSWER.summary).waitFor();
    expect(await page.getByRole('button', { name: 'Re-run analysis' }).count()).toBe(0);
    expect(failedRequests).toEqual([]);
  });

  it('talks to an agent from the browser: fake microphone in, the agent heard, barge-in, the call live then on its page', async () => {
    expect(adminKey).toMatch(/^sk_live_/); // from the first test's sign-in link
    replyMs = 6000;
    // The caller's voice: the question, then 2.5 s of silence (Chromium loops the file, so the caller
    // asks again 2.5 s after finishing: during the agent's 6 s reply, which is a barge-in).
    const question = readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav'))));
    const samples = new Int16Array(question.samples.length + 16_000 * 2.5);
    samples.set(question.samples);
    const micFile = join(dataDir, 'caller.wav');
    writeFileSync(micFile, writeWav({ sampleRate: 16_000, channelCount: 1, samples }));
    const callerBrowser = await launchChromium(['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${micFile}`, '--autoplay-policy=no-user-gesture-required']);
    try {
      const signIn = async (page: Page) => {
        await page.goto(`${baseUrl}/#/sign-in`);
        await page.getByLabel('API key').fill(adminKey);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByTestId('agents-table').waitFor();
      };
      const watcher = await callerBrowser.newPage();
      await signIn(watcher);
      await watcher.getByRole('link', { name: 'Calls' }).click();
      await watcher.getByTestId('feed-state').getByText('live').waitFor();

      const page = await callerBrowser.newPage();
      await signIn(page);
      await page.getByRole('button', { name: 'Talk to Opening hours' }).click();
      await page.getByRole('button', { name: 'Start call' }).click();
      await page.getByTestId('talk-state').getByText('live').waitFor({ timeout: 15_000 });
      // The call shows up live in the other tab, as a web call.
      const liveRow = watcher.locator('tr', { hasText: 'web' }).filter({ hasText: '(live)' });
      await liveRow.waitFor({ timeout: 15_000 });
      await screenshot(watcher, 'calls-web-live');

      // While it is live: the caller's microphone is heard, and what they said shows as the server transcribed it.
      await page.getByTestId('microphone-level').getByText('speaking').waitFor({ timeout: 15_000 });
      await page.getByTestId('talk-transcript').getByText('What time do you open tomorrow?').first().waitFor({ timeout: 20_000 });
      await expect(page.getByTestId('talk-state').textContent()).resolves.toContain('live');
      // The agent's reply is played (the page measures what its playback plays).
      await page.getByTestId('agent-level').getByText('speaking').waitFor({ timeout: 20_000 });
      await screenshot(page, 'talk');
      // Let the looping caller speak over the reply, then hang up.
      await page.waitForTimeout(7_000);
      await page.getByRole('button', { name: 'Hang up' }).click();
      await page.getByTestId('talk-state').getByText('ended').waitFor({ timeout: 10_000 });
      // The meters stop with the call, and the panel says how it ended.
      await expect(page.getByTestId('agent-level').getAttribute('data-level')).resolves.toBe('0');
      await expect(page.getByTestId('microphone-level').textContent()).resolves.toContain('off');
      await page.getByTestId('talk-end').getByText('Call ended (hung up).').waitFor({ timeout: 15_000 });
      const webCallId = ((await page.getByRole('link', { name: "Open this call's page" }).getAttribute('href')) ?? '').split('/').at(-1) as string;
      // The other tab's list: the web call by its agent, completed, with its duration and cost.
      const webRow = watcher.locator(`tr[data-call-id="${webCallId}"]`);
      await webRow.locator('[data-column="status"]').getByText('completed').waitFor({ timeout: 15_000 });
      await webRow.locator('[data-column="agent"]').getByText('Opening hours', { exact: true }).waitFor();
      await expect(webRow.locator('[data-column="duration"]').textContent()).resolves.toMatch(/^\d+:\d\d$/);
      await webRow.locator('[data-column="cost"]').getByText(MONEY_TOTAL).waitFor({ timeout: 15_000 });

      await page.getByRole('link', { name: "Open this call's page" }).click();
      await page.getByTestId('transcript').getByText('What time do you open tomorrow?').first().waitFor();
      await page.getByTestId('transcript').getByText(/interrupted/).first().waitFor({ timeout: 10_000 });
      await page.getByTestId('latency-waterfall').locator('svg').waitFor();
      await page.getByTestId('cost-ledger').getByText('stt').waitFor({ timeout: 15_000 });
      await expect(page.getByTestId('cost-ledger').getByText('telephony').count()).resolves.toBe(0);
      // The page refreshes until the call has ended and been priced: wait for the end to show.
      await page.getByTestId('call-status').filter({ hasText: 'completed — hung up (stream_stopped)' }).waitFor({ timeout: 15_000 });
      await expect(page.getByTestId('call-title').textContent()).resolves.toBe('Browser call to Opening hours');
      await expect(page.getByTestId('call-agent').getByRole('link').textContent()).resolves.toBe('Opening hours');
      // Events read as rows: what each means, its payload one click away.
      const started = page.getByTestId('events').locator('tr[data-event-type="stream_started"]');
      await expect(started.locator('td.type').textContent()).resolves.toBe('stream started');
      await expect(started.locator('summary').textContent()).resolves.toBe('Audio connected (browser, 16 kHz)');
      await started.locator('summary').click();
      await expect(started.locator('pre').textContent()).resolves.toContain('"transport": "web"');
      await page.getByTestId('events').locator('tr[data-event-type="barge_in"] summary').first().getByText('The caller interrupted the agent').waitFor();
      await screenshot(page, 'call-page');
    } finally {
      await callerBrowser.close();
      replyMs = 1500;
    }
  });

  /** Signs `page` in with the admin key the first test's link gave. */
  const signInAsAdmin = async (page: Page) => {
    await page.goto(`${baseUrl}/#/sign-in`);
    await page.getByLabel('API key').fill(adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('agents-table').waitFor();
  };

  it('says in words why a browser call failed, links its page, and marks it an error in the calls list', async () => {
    expect(adminKey).toMatch(/^sk_live_/);
    const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    // A realtime agent whose model server is down: it reads ready (its key is stored, its host is
    // allowed), and its calls fail as they start, when the model connection is refused.
    expect((await fetch(`${baseUrl}/v1/secrets`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'desk-realtime-key', value: 'sk-test-0000' }) })).status).toBe(201);
    const deadPort = await freeLoopbackPort();
    const created = await fetch(`${baseUrl}/v1/agents`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'Lost model desk', engine: 'realtime', config: { realtime: { url: `ws://127.0.0.1:${deadPort}/v1/realtime`, apiKeySecret: 'desk-realtime-key' } } }),
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { readiness: { ready: boolean } }).readiness.ready).toBe(true);

    const callerBrowser = await launchChromium(['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', '--autoplay-policy=no-user-gesture-required']);
    try {
      const page = await callerBrowser.newPage();
      await signInAsAdmin(page);
      await page.getByRole('button', { name: 'Talk to Lost model desk' }).click();
      await page.getByRole('button', { name: 'Start call' }).click();
      // The reason the call recorded, not a socket close code; the meters are off.
      const end = page.getByTestId('talk-end');
      await end.getByText(/^Error \(realtime connect failed\): Realtime connection failed: connect ECONNREFUSED/).waitFor({ timeout: 30_000 });
      await expect(page.getByTestId('talk-state').textContent()).resolves.toBe('failed');
      await expect(page.getByTestId('agent-level').textContent()).resolves.toContain('off');
      await screenshot(page, 'talk-error');
      await end.getByRole('link', { name: "See the call's page" }).click();
      await page.getByTestId('call-failure').getByText(/Realtime connection failed: connect ECONNREFUSED/).waitFor();
      await page.getByTestId('call-status').filter({ hasText: 'error — agent error (agent_error)' }).waitFor();
      await expect(page.getByTestId('events').locator('tr.error[data-event-type="error"] summary').textContent()).resolves.toMatch(/^Error \(realtime connect failed\): Realtime connection failed/);
      // In the list it is an error, not "completed".
      const callId = page.url().split('/').at(-1) as string;
      await page.getByRole('link', { name: 'Calls', exact: true }).click();
      const row = page.locator(`tr[data-call-id="${callId}"]`);
      await row.locator('[data-column="status"]').getByText('error', { exact: true }).waitFor();
      await expect(row.locator('[data-column="end-reason"]').textContent()).resolves.toBe('agent error');
      // Agents' names arrive with the page's own read of the agents list.
      await row.locator('[data-column="agent"]').getByText('Lost model desk', { exact: true }).waitFor();
      await row.locator('[data-column="cost"]').getByText(MONEY_TOTAL).waitFor({ timeout: 15_000 });
      await screenshot(page, 'calls');
    } finally {
      await callerBrowser.close();
    }
  });

  it('shows why an agent is not ready: a badge in the list, its problems on its page, and Talk says why instead of calling', async () => {
    expect(adminKey).toMatch(/^sk_live_/);
    const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    // OpenAI's own endpoint and no key: this server has no OPENAI_API_KEY and the agent names no secret.
    const created = await fetch(`${baseUrl}/v1/agents`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'No key desk', engine: 'pipeline', config: { stt: { provider: 'openai', model: 'whisper-1' }, llm: { provider: 'openai', model: 'gpt-4o-mini' }, tts: { provider: 'openai', voice: 'alloy' } } }),
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { id: string; readiness: { ready: boolean; problems: Array<{ path: string; message: string }> } };
    expect(agent.readiness.ready).toBe(false);
    expect(agent.readiness.problems.length).toBeGreaterThan(0);
    const refused = await fetch(`${baseUrl}/v1/agents/${agent.id}/web-calls`, { method: 'POST', headers: admin, body: '{}' });
    expect(refused.status).toBe(409);

    const page = await browser.newPage();
    await signInAsAdmin(page);
    await page.getByTestId(`not-ready-${agent.id}`).waitFor();
    await page.getByRole('button', { name: 'Talk to No key desk' }).click();
    const notReady = page.getByTestId('talk-not-ready');
    for (const problem of agent.readiness.problems) await notReady.getByText(problem.message, { exact: false }).first().waitFor();
    expect(await page.getByRole('button', { name: 'Start call' }).count()).toBe(0);
    await page.getByTestId('agents-table').getByRole('link', { name: 'No key desk' }).click();
    const problems = page.getByTestId('agent-problems');
    for (const problem of agent.readiness.problems) await problems.getByText(problem.message, { exact: false }).first().waitFor();
    await expect(page.getByTestId('agent-readiness').textContent()).resolves.toBe('not ready');
    await page.close();
  });

  it("runs an agent's scenario suite from its page and shows which scenario failed and why", async () => {
    expect(adminKey).toMatch(/^sk_live_/);
    const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    const remote = { provider: 'openai', baseUrl: engines.baseUrl };
    const created = await fetch(`${baseUrl}/v1/agents`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'Tested desk', engine: 'pipeline', config: { firstMessage: null, stt: { ...remote, model: 'whisper-1' }, llm: { ...remote, model: 'gpt-test' }, tts: { ...remote, model: 'tts-test', voice: 'alloy' } } }),
    });
    const { id: agentId } = (await created.json()) as { id: string };
    const suite = {
      name: 'opening hours',
      turnTimeoutMs: 8_000,
      scenarios: [
        { name: 'says when it opens', turns: [{ say: 'What time do you open tomorrow?', expect: { replyIncludes: ['nine'] } }] },
        { name: 'expects the wrong hour', turns: [{ say: 'What time do you open tomorrow?', expect: { replyIncludes: ['ten'] } }] },
      ],
    };
    expect((await fetch(`${baseUrl}/v1/agents/${agentId}/tests`, { method: 'POST', headers: admin, body: JSON.stringify(suite) })).status).toBe(201);

    const page = await browser.newPage();
    await page.goto(`${baseUrl}/#/sign-in`);
    await page.getByLabel('API key').fill(adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('agents-table').getByRole('link', { name: 'Tested desk' }).click();
    const tests = page.getByTestId('agent-tests');
    await tests.getByTestId('suites-table').getByText('opening hours').waitFor();
    await tests.getByRole('button', { name: 'Run opening hours' }).click();
    // Two real-time calls, one after the other; the panel re-reads the run until it ends.
    const finished = tests.locator('details[data-run-status="failed"]');
    await finished.waitFor({ timeout: 90_000 });
    await expect(finished.locator('summary').textContent()).resolves.toContain('1 of 2 passed');
    await finished.getByText('PASS says when it opens').waitFor();
    await finished.getByText('FAIL expects the wrong hour').waitFor();
    await finished.getByText('reply does not include "ten" (reply: "We open at nine in the morning.")').waitFor();
    await screenshot(page, 'agent-tests');
    await page.close();
  });
});
