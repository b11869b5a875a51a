import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { computeTwilioSignature } from '@switchboard/simulated-caller';
import { FakeTwilioRestServer } from './fake-twilio-rest-server';

/** The application Twilio calls back: records every signed form, answers TwiML fetches with `twiml`. */
class ApplicationStub {
  readonly received: { path: string; params: Record<string, string>; signature: string | undefined }[] = [];
  twiml = '<Response><Hangup/></Response>';

  private constructor(private readonly server: Server) {}

  static async start(): Promise<ApplicationStub> {
    const server = createServer();
    const stub = new ApplicationStub(server);
    server.on('request', (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const params = Object.fromEntries(new URLSearchParams(body));
        stub.received.push({ path: req.url ?? '', params, signature: req.headers['x-twilio-signature'] as string | undefined });
        if (req.url?.startsWith('/twiml')) {
          res.writeHead(200, { 'content-type': 'text/xml' });
          res.end(stub.twiml);
        } else {
          res.writeHead(204);
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return stub;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  eventsAt(path: string, field: string): string[] {
    return this.received.filter((request) => request.path === path).map((request) => request.params[field] ?? '');
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const PUBLIC = 'https://app.test';

describe('FakeTwilioRestServer: Twilio\'s side of calls (progress, TwiML, conferences)', () => {
  let twilio: FakeTwilioRestServer;
  let app: ApplicationStub;

  beforeEach(async () => {
    twilio = await FakeTwilioRestServer.start();
    app = await ApplicationStub.start();
    twilio.deliverWebhooksTo(PUBLIC, app.baseUrl);
  });
  afterEach(async () => {
    await twilio.close();
    await app.close();
  });

  async function createCall(fields: [string, string][]): Promise<string> {
    const response = await fetch(`${twilio.baseUrl}/2010-04-01/Accounts/${twilio.accountSid}/Calls.json`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}` },
      body: new URLSearchParams([['To', '+15550003333'], ['From', '+15550001111'], ...fields]),
    });
    expect(response.status).toBe(201);
    return String(((await response.json()) as { sid: string }).sid);
  }

  function redirect(sid: string, twiml: string): Promise<Response> {
    return fetch(`${twilio.baseUrl}/2010-04-01/Accounts/${twilio.accountSid}/Calls/${sid}.json`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}` },
      body: new URLSearchParams({ Twiml: twiml }),
    });
  }

  const conferenceTwiml = (options: { start: boolean; end: boolean }) =>
    `<Response><Dial><Conference startConferenceOnEnter="${options.start}" endConferenceOnExit="${options.end}" statusCallback="${PUBLIC}/conference" statusCallbackEvent="join leave start end">room-1</Conference></Dial></Response>`;

  it('rings and answers a created call: signed status callbacks, its TwiML fetched from its Url, its <Say> recorded', async () => {
    app.twiml = '<Response><Say>Hello colleague.</Say><Hangup/></Response>';
    const sid = await createCall([
      ['Url', `${PUBLIC}/twiml`],
      ['StatusCallback', `${PUBLIC}/status`],
      ['StatusCallbackEvent', 'ringing'],
      ['StatusCallbackEvent', 'answered'],
      ['StatusCallbackEvent', 'completed'],
      ['Timeout', '25'],
    ]);
    twilio.ringCall(sid);
    const program = await twilio.answerCall(sid);
    await twilio.webhooksSettled();

    expect(program).toMatchObject({ says: ['Hello colleague.'], hangup: true });
    expect(twilio.call(sid)).toMatchObject({ said: ['Hello colleague.'], status: 'completed', timeout: 25 });
    expect(app.eventsAt('/status', 'CallStatus')).toEqual(['ringing', 'in-progress', 'completed']);
    const fetchTwiml = app.received.find((request) => request.path === '/twiml')!;
    expect(fetchTwiml.params).toMatchObject({ CallSid: sid, AccountSid: twilio.accountSid, To: '+15550003333', From: '+15550001111', CallStatus: 'in-progress', Direction: 'outbound-api' });
    // Every callback is signed over the public URL, as Twilio signs it.
    for (const request of app.received) {
      expect(request.signature).toBe(computeTwilioSignature(twilio.authToken, `${PUBLIC}${request.path}`, request.params));
    }
  });

  it('reports only the final status when no StatusCallbackEvent was asked for, with the outcome as CallStatus', async () => {
    const sid = await createCall([['Twiml', '<Response><Say>x</Say></Response>'], ['StatusCallback', `${PUBLIC}/status`]]);
    twilio.ringCall(sid);
    twilio.endCall(sid, 'no-answer');
    await twilio.webhooksSettled();
    expect(app.eventsAt('/status', 'CallStatus')).toEqual(['no-answer']);
    expect(twilio.call(sid)?.status).toBe('no-answer');
    await expect(twilio.answerCall(sid)).rejects.toThrow('it cannot be answered');
  });

  it('holds a waiting participant until one that starts the conference joins, and ends it when that one leaves', async () => {
    const caller = twilio.addCall().sid;
    expect((await redirect(caller, conferenceTwiml({ start: false, end: true }))).status).toBe(200);
    expect(twilio.conference('room-1')).toMatchObject({ status: 'init', participants: [expect.objectContaining({ callSid: caller, leftAt: null })] });

    const destination = await createCall([['Twiml', `<Response><Say>Summary.</Say>${conferenceTwiml({ start: true, end: true }).slice('<Response>'.length)}`]]);
    await twilio.answerCall(destination);
    expect(twilio.conference('room-1')?.status).toBe('in-progress');
    expect(twilio.call(destination)?.said).toEqual(['Summary.']);

    // The destination hangs up: the conference ends and lets the caller go; the caller's call ends with it.
    twilio.endCall(destination, 'completed');
    await twilio.webhooksSettled();
    expect(twilio.conference('room-1')?.status).toBe('completed');
    expect(twilio.call(caller)?.status).toBe('completed');
    const events = app.received.filter((r) => r.path === '/conference').map((r) => [r.params['StatusCallbackEvent'], r.params['CallSid'] ?? null]);
    expect(events).toEqual([
      ['participant-join', caller],
      ['participant-join', destination],
      ['conference-start', null],
      ['participant-leave', destination],
      ['participant-leave', caller],
      ['conference-end', null],
    ]);
    expect(app.received.find((r) => r.path === '/conference')?.params).toMatchObject({ FriendlyName: 'room-1', ConferenceSid: expect.stringMatching(/^CF[0-9a-f]{32}$/) });
  });

  it('takes a redirected call out of its conference (participant-leave), and runs the new TwiML', async () => {
    const caller = twilio.addCall().sid;
    await redirect(caller, conferenceTwiml({ start: false, end: true }));
    const back = `<Response><Connect><Stream url="wss://app.test/media"><Parameter name="callId" value="c1"/></Stream></Connect></Response>`;
    expect((await redirect(caller, back)).status).toBe(200);
    await twilio.webhooksSettled();
    expect(app.eventsAt('/conference', 'StatusCallbackEvent')).toEqual(['participant-join', 'participant-leave', 'conference-end']);
    // A conference nobody is left in is over; the call itself goes on, streaming.
    expect(twilio.conference('room-1')?.status).toBe('completed');
    expect(twilio.call(caller)).toMatchObject({ status: 'in-progress', twiml: back });
  });

  it('records callbacks it cannot route, and sends nothing, until told where the application is', async () => {
    const quiet = await FakeTwilioRestServer.start();
    try {
      const sid = quiet.addCall({ status: 'queued' }).sid;
      await expect(quiet.answerCall(sid)).rejects.toThrow('has neither Url nor Twiml');
      const caller = quiet.addCall().sid;
      const response = await fetch(`${quiet.baseUrl}/2010-04-01/Accounts/${quiet.accountSid}/Calls/${caller}.json`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${quiet.accountSid}:${quiet.authToken}`).toString('base64')}` },
        body: new URLSearchParams({ Twiml: conferenceTwiml({ start: true, end: false }) }),
      });
      expect(response.status).toBe(200);
      await quiet.webhooksSettled();
      expect(quiet.webhookDeliveries[0]).toMatchObject({ url: `${PUBLIC}/conference`, status: 0, error: expect.stringContaining('not routable') });
    } finally {
      await quiet.close();
    }
  });
});
