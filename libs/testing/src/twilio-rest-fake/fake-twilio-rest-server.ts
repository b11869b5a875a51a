import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { newSid } from '../twilio-caller/twilio-sid';
import { AUTHENTICATION_ERROR, callResource, errorBody, INTERNAL_ERROR, notFound } from './call-resource';
import type {
  FakeCall,
  FakeCallStatus,
  FakeCallUpdate,
  FakeTwilioError,
  FakeTwilioFailure,
  FakeTwilioOperation,
  RecordedTwilioRequest,
} from './fake-twilio-rest-types';

export interface FakeTwilioRestServerOptions {
  /** Default: a fresh AC sid. */
  accountSid?: string;
  /** Default: 32 random hex digits. */
  authToken?: string;
  /**
   * Inbound calls reach Twilio by phone, not through this API, so the fake cannot know them: by
   * default an update to an unknown call SID is a 404 (code 20404) like a call that never existed,
   * and tests register inbound calls with addCall(). When true, an unknown SID is taken to be an
   * in-progress inbound call instead.
   */
  acceptUnknownCalls?: boolean;
}

/** What a test (or a create request) decides about a new call; the rest is filled in. */
type NewCall = Partial<Pick<FakeCall, 'sid' | 'from' | 'to' | 'status' | 'direction'>>;

const ENDED: ReadonlySet<FakeCallStatus> = new Set(['completed', 'canceled', 'busy', 'no-answer', 'failed']);

const CALLS_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\.json$/;
const CALL_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\/([^/]+)\.json$/;

/** Generic "bad parameter" answer; the fake does not try to reproduce Twilio's per-parameter codes. */
function invalidParameter(message: string): FakeTwilioError {
  return { status: 400, code: 20001, message };
}

function parseForm(body: string): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const previous = form[key];
    form[key] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return form;
}

/** One value of a form field: the last, when the field was repeated. */
function field(form: Record<string, string | string[]>, name: string): string | undefined {
  const value = form[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function fieldList(form: Record<string, string | string[]>, name: string): string[] {
  const value = form[name];
  if (value === undefined) return [];
  // twilio-node repeats the key; some clients send one space-separated value.
  return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(' ')).filter((v) => v.length > 0);
}

/**
 * A real HTTP server on 127.0.0.1 speaking the part of Twilio's REST API Switchboard uses: create a
 * call, update (hang up / redirect with TwiML) a call, fetch a call. Requests need HTTP Basic auth
 * with the fake's account SID and auth token (401 otherwise, as Twilio answers). Every request is
 * recorded; failNext injects failures; onCallUpdate lets a test react to an update the way Twilio
 * would (e.g. close the media stream after a hang-up or transfer).
 */
export class FakeTwilioRestServer {
  readonly accountSid: string;
  readonly authToken: string;
  readonly requests: RecordedTwilioRequest[] = [];
  /** Errors thrown by onCallUpdate (a hook failing must not crash the fake's request handling). */
  readonly hookErrors: unknown[] = [];
  onCallUpdate?: (update: FakeCallUpdate) => void | Promise<void>;
  private readonly callsBySid = new Map<string, FakeCall>();
  private readonly failures: Record<Exclude<FakeTwilioOperation, 'unknown'>, FakeTwilioFailure[]> = {
    create_call: [],
    update_call: [],
    fetch_call: [],
  };
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly options: FakeTwilioRestServerOptions,
  ) {
    this.accountSid = options.accountSid ?? newSid('AC');
    this.authToken = options.authToken ?? randomBytes(16).toString('hex');
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.sendJson(res, undefined, 500, { message: `fake server error: ${(error as Error).message}` });
        else res.destroy();
      });
    });
  }

  static async start(options: FakeTwilioRestServerOptions = {}): Promise<FakeTwilioRestServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new FakeTwilioRestServer(server, options);
  }

  /** `http://127.0.0.1:PORT`: what replaces `https://api.twilio.com`. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get calls(): ReadonlyMap<string, Readonly<FakeCall>> {
    return this.callsBySid;
  }

  call(sid: string): Readonly<FakeCall> | undefined {
    return this.callsBySid.get(sid);
  }

  /** Registers a call the fake did not create (an inbound call), in progress unless told otherwise. */
  addCall(call: NewCall = {}): Readonly<FakeCall> {
    return this.register(call);
  }

  private register(call: NewCall): FakeCall {
    const now = new Date();
    const status = call.status ?? 'in-progress';
    const added: FakeCall = {
      sid: call.sid ?? newSid('CA'),
      accountSid: this.accountSid,
      from: call.from ?? '+15550001111',
      to: call.to ?? '+15550002222',
      status,
      direction: call.direction ?? 'inbound',
      dateCreated: now,
      dateUpdated: now,
      startTime: status === 'queued' || status === 'ringing' ? null : now,
      endTime: ENDED.has(status) ? now : null,
      statusCallbackEvents: [],
    };
    this.callsBySid.set(added.sid, added);
    return added;
  }

  /** Moves a call on as the phone network would (answered, the caller hung up...). */
  setCallStatus(sid: string, status: FakeCallStatus): void {
    const call = this.callsBySid.get(sid);
    if (call === undefined) throw new Error(`fake Twilio knows no call ${sid}`);
    this.applyStatus(call, status);
  }

  /** The next `times` requests of `operation` fail (after the auth check), queued behind earlier ones. */
  failNext(operation: Exclude<FakeTwilioOperation, 'unknown'>, failure: FakeTwilioFailure, times = 1): this {
    for (let i = 0; i < times; i++) this.failures[operation].push(failure);
    return this;
  }

  requestsFor(operation: FakeTwilioOperation): RecordedTwilioRequest[] {
    return this.requests.filter((request) => request.operation === operation);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? '';
    const createMatch = CALLS_PATH.exec(path);
    const callMatch = CALL_PATH.exec(path);
    let operation: FakeTwilioOperation = 'unknown';
    if (createMatch !== null && method === 'POST') operation = 'create_call';
    else if (callMatch !== null && method === 'POST') operation = 'update_call';
    else if (callMatch !== null && method === 'GET') operation = 'fetch_call';
    const recorded: RecordedTwilioRequest = {
      operation,
      method,
      path,
      headers: req.headers,
      form: parseForm(Buffer.concat(chunks).toString('utf8')),
      accountSid: createMatch?.[1] ?? callMatch?.[1],
      callSid: callMatch?.[2],
      authorized: this.isAuthorized(req.headers.authorization),
      status: 0,
    };
    this.requests.push(recorded);

    if (!recorded.authorized) return this.sendError(res, recorded, AUTHENTICATION_ERROR);
    if (operation === 'unknown' || recorded.accountSid !== this.accountSid) return this.sendError(res, recorded, notFound(path));
    const failure = this.failures[operation].shift();
    if (failure !== undefined) return this.sendError(res, recorded, this.failureError(failure, path));
    switch (operation) {
      case 'create_call':
        return this.createCall(res, recorded);
      case 'update_call':
        return this.updateCall(res, recorded);
      case 'fetch_call': {
        const call = this.callsBySid.get(recorded.callSid ?? '');
        if (call === undefined) return this.sendError(res, recorded, notFound(path));
        return this.sendJson(res, recorded, 200, callResource(call));
      }
    }
  }

  private isAuthorized(header: string | undefined): boolean {
    const expected = `Basic ${Buffer.from(`${this.accountSid}:${this.authToken}`).toString('base64')}`;
    return header === expected;
  }

  private failureError(failure: FakeTwilioFailure, path: string): FakeTwilioError {
    if (failure === 'call_not_found') return notFound(path);
    if (failure === 'server_error') return INTERNAL_ERROR;
    return failure;
  }

  private createCall(res: ServerResponse, recorded: RecordedTwilioRequest): void {
    const { form } = recorded;
    const to = field(form, 'To');
    const from = field(form, 'From');
    const url = field(form, 'Url');
    const twiml = field(form, 'Twiml');
    if (to === undefined) return this.sendError(res, recorded, { status: 400, code: 21201, message: "No 'To' number is specified" });
    if (from === undefined) return this.sendError(res, recorded, { status: 400, code: 21603, message: "A 'From' phone number is required." });
    if (url === undefined && twiml === undefined && field(form, 'ApplicationSid') === undefined) {
      return this.sendError(res, recorded, { status: 400, code: 21205, message: 'Url parameter is required.' });
    }
    const call = this.register({ to, from, status: 'queued', direction: 'outbound-api' });
    call.url = url;
    call.twiml = twiml;
    call.statusCallback = field(form, 'StatusCallback');
    call.statusCallbackEvents = fieldList(form, 'StatusCallbackEvent');
    call.machineDetection = field(form, 'MachineDetection');
    this.sendJson(res, recorded, 201, callResource(call));
  }

  private updateCall(res: ServerResponse, recorded: RecordedTwilioRequest): void {
    const { form, path } = recorded;
    const sid = recorded.callSid ?? '';
    let call = this.callsBySid.get(sid);
    if (call === undefined && this.options.acceptUnknownCalls === true) call = this.register({ sid });
    // Twilio answers 20404 for a call that is over as well as for one that never existed.
    if (call === undefined || ENDED.has(call.status)) return this.sendError(res, recorded, notFound(path));

    const status = field(form, 'Status');
    const twiml = field(form, 'Twiml');
    const url = field(form, 'Url');
    if (status !== undefined && status !== 'completed' && status !== 'canceled') {
      return this.sendError(res, recorded, invalidParameter(`Status must be "canceled" or "completed", got "${status}"`));
    }
    if (twiml !== undefined && url !== undefined) return this.sendError(res, recorded, invalidParameter('Twiml and Url are mutually exclusive'));

    let kind: FakeCallUpdate['kind'] | undefined;
    if (status === 'completed' || (status === 'canceled' && (call.status === 'queued' || call.status === 'ringing'))) {
      // "canceled" only ends a call that has not been answered; "completed" ends any live call.
      this.applyStatus(call, status === 'canceled' ? 'canceled' : 'completed');
      kind = 'hang_up';
    } else if (status === undefined && (twiml !== undefined || url !== undefined)) {
      if (call.status !== 'in-progress') {
        return this.sendError(res, recorded, { status: 400, code: 21220, message: 'Call is not in-progress. Cannot redirect.' });
      }
      call.twiml = twiml;
      call.url = url;
      call.dateUpdated = new Date();
      kind = 'redirect';
    }
    this.sendJson(res, recorded, 200, callResource(call));
    if (kind !== undefined) this.notifyUpdate({ call: { ...call }, form, kind });
  }

  private applyStatus(call: FakeCall, status: FakeCallStatus): void {
    const now = new Date();
    if (status === 'in-progress' && call.startTime === null) call.startTime = now;
    if (ENDED.has(status) && call.endTime === null) call.endTime = now;
    call.status = status;
    call.dateUpdated = now;
  }

  /** Runs after the answer is sent: Twilio acts on an update after accepting it. */
  private notifyUpdate(update: FakeCallUpdate): void {
    const hook = this.onCallUpdate;
    if (hook === undefined) return;
    Promise.resolve()
      .then(() => hook(update))
      .catch((error: unknown) => this.hookErrors.push(error));
  }

  private sendError(res: ServerResponse, recorded: RecordedTwilioRequest, error: FakeTwilioError): void {
    this.sendJson(res, recorded, error.status, errorBody(error));
  }

  private sendJson(res: ServerResponse, recorded: RecordedTwilioRequest | undefined, status: number, body: unknown): void {
    if (recorded !== undefined) recorded.status = status;
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  }
}
