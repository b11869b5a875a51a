import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { newSid } from '@switchboard/simulated-caller';
import { accountResource, basicAuthorization, newAccount, type FakeNewAccount } from './account-resource';
import { AUTHENTICATION_ERROR, callResource, errorBody, INTERNAL_ERROR, notFound } from './call-resource';
import type {
  FakeAccount,
  FakeCall,
  FakeCallStatus,
  FakeCallUpdate,
  FakeIncomingNumber,
  FakeIncomingNumberOptions,
  FakeTwilioError,
  FakeTwilioFailableOperation,
  FakeTwilioFailure,
  FakeTwilioOperation,
  RecordedTwilioRequest,
} from './fake-twilio-rest-types';
import { FakeCallProgress } from './fake-call-progress';
import type { FakeConference } from './fake-conferences';
import type { FakeWebhookDelivery } from './fake-webhook-sender';
import type { TwimlProgram } from './twiml-program';
import { incomingNumberResource, incomingNumbersPage, newIncomingNumber } from './incoming-number-resource';
import { field, fieldList, parseParams, routeRequest } from './twilio-rest-routing';

export interface FakeTwilioRestServerOptions {
  /** The default account's SID. Default: a fresh AC sid. */
  accountSid?: string;
  /** The default account's auth token. Default: 32 random hex digits. */
  authToken?: string;
  /**
   * Inbound calls reach Twilio by phone, not through this API, so the fake cannot know them: by
   * default an update to an unknown call SID is a 404 (code 20404) like a call that never existed,
   * and tests register inbound calls with addCall(). When true, an unknown SID is taken to be an
   * in-progress inbound call of the account in the path instead (a SID of another account's call
   * stays a 404).
   */
  acceptUnknownCalls?: boolean;
}

/**
 * What a test (or a create request) decides about a new call; the rest is filled in. accountSid:
 * the account the call belongs to (default: the default account).
 */
export type FakeNewCall = Partial<Pick<FakeCall, 'sid' | 'accountSid' | 'from' | 'to' | 'status' | 'direction'>>;

const ENDED: ReadonlySet<FakeCallStatus> = new Set(['completed', 'canceled', 'busy', 'no-answer', 'failed']);

/** Generic "bad parameter" answer; the fake does not try to reproduce Twilio's per-parameter codes. */
function invalidParameter(message: string): FakeTwilioError {
  return { status: 400, code: 20001, message };
}

/**
 * A real HTTP server on 127.0.0.1 speaking the part of Twilio's REST API Switchboard uses, for any
 * number of accounts: create, update (hang up / redirect with TwiML) and fetch a call; list and fetch
 * an account's IncomingPhoneNumbers; fetch an account. A request on `/2010-04-01/Accounts/{Sid}/...`
 * needs HTTP Basic auth with that account's SID and auth token (401, code 20003 otherwise, as Twilio
 * answers), and sees only that account's calls and numbers. Every request is recorded; failNext
 * injects failures; onCallUpdate lets a test react to an update the way Twilio would (e.g. close the
 * media stream after a hang-up or transfer). It also plays Twilio's side of the calls (ringCall,
 * answerCall, endCall, after deliverWebhooksTo): signed status callbacks, TwiML fetched when a test
 * answers a created call, <Say>s recorded, conferences joined and left with their callbacks.
 */
export class FakeTwilioRestServer {
  /** The default account (constructor options), which addCall and create requests use unless told otherwise. */
  readonly accountSid: string;
  readonly authToken: string;
  readonly requests: RecordedTwilioRequest[] = [];
  /** Errors thrown by onCallUpdate (a hook failing must not crash the fake's request handling). */
  readonly hookErrors: unknown[] = [];
  onCallUpdate?: (update: FakeCallUpdate) => void | Promise<void>;
  private readonly accountsBySid = new Map<string, FakeAccount>();
  private readonly callsBySid = new Map<string, FakeCall>();
  private readonly numbersBySid = new Map<string, FakeIncomingNumber>();
  private readonly failures: Record<FakeTwilioFailableOperation, FakeTwilioFailure[]> = {
    create_call: [],
    update_call: [],
    fetch_call: [],
    list_incoming_numbers: [],
    fetch_incoming_number: [],
    fetch_account: [],
  };
  private readonly sockets = new Set<Socket>();
  /**
   * Twilio's side of calls beyond the REST API, which tests drive as the phone network would: calls
   * ring, are answered (their TwiML fetched and run) or not, conferences fill and empty, and every
   * step is called back to the application, signed (see FakeCallProgress; deliverWebhooksTo first).
   */
  private readonly network = new FakeCallProgress({
    authTokenOf: (accountSid) => this.knownAccount(accountSid).authToken,
    call: (sid) => this.callsBySid.get(sid),
    applyStatus: (call, status) => this.applyStatus(call, status),
  });

  private constructor(
    private readonly server: Server,
    private readonly options: FakeTwilioRestServerOptions,
  ) {
    const { accountSid, authToken } = this.addAccount({ accountSid: options.accountSid, authToken: options.authToken });
    this.accountSid = accountSid;
    this.authToken = authToken;
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

  /** Another Twilio account (an organization's own), with a fresh AC sid and 32-hex auth token unless given. */
  addAccount(account: FakeNewAccount = {}): { accountSid: string; authToken: string } {
    const added = newAccount(account);
    if (this.accountsBySid.has(added.sid)) throw new Error(`fake Twilio already has account ${added.sid}`);
    this.accountsBySid.set(added.sid, added);
    return { accountSid: added.sid, authToken: added.authToken };
  }

  get accounts(): ReadonlyMap<string, Readonly<FakeAccount>> {
    return this.accountsBySid;
  }

  /**
   * Puts a phone number on an account (as buying or porting it would); returns its PN sid. A number
   * belongs to one account at a time: remove it before giving it to another.
   */
  addIncomingNumber(accountSid: string, e164: string, options: FakeIncomingNumberOptions = {}): string {
    this.knownAccount(accountSid);
    const owner = this.incomingNumber(e164);
    if (owner !== undefined) throw new Error(`fake Twilio: ${e164} already belongs to account ${owner.accountSid}`);
    const added = newIncomingNumber(accountSid, e164, options);
    if (this.numbersBySid.has(added.sid)) throw new Error(`fake Twilio already has a number ${added.sid}`);
    this.numbersBySid.set(added.sid, added);
    return added.sid;
  }

  /** Takes a number off an account (released or ported away); false when the account did not own it. */
  removeIncomingNumber(accountSid: string, e164: string): boolean {
    const number = this.incomingNumber(e164);
    if (number === undefined || number.accountSid !== accountSid) return false;
    return this.numbersBySid.delete(number.sid);
  }

  /** Every account's numbers, by PN sid. */
  get incomingNumbers(): ReadonlyMap<string, Readonly<FakeIncomingNumber>> {
    return this.numbersBySid;
  }

  /** The number with this E.164 form, whichever account owns it. */
  incomingNumber(e164: string): Readonly<FakeIncomingNumber> | undefined {
    return [...this.numbersBySid.values()].find((n) => n.phoneNumber === e164);
  }

  // ---- the phone network's side (FakeCallProgress documents each) ------------------------------

  deliverWebhooksTo(publicBaseUrl: string, localBaseUrl: string): void {
    this.network.deliverWebhooksTo(publicBaseUrl, localBaseUrl);
  }

  get webhookDeliveries(): readonly FakeWebhookDelivery[] {
    return this.network.webhookDeliveries;
  }

  webhooksSettled(): Promise<void> {
    return this.network.webhooksSettled();
  }

  get conferences(): readonly FakeConference[] {
    return this.network.conferences;
  }

  conference(name: string): FakeConference | undefined {
    return this.network.conference(name);
  }

  ringCall(sid: string): void {
    this.network.ring(sid);
  }

  answerCall(sid: string): Promise<TwimlProgram> {
    return this.network.answer(sid);
  }

  endCall(sid: string, status: 'completed' | 'busy' | 'no-answer' | 'failed' | 'canceled'): void {
    this.network.finish(sid, status);
  }

  /** Every account's calls, by CA sid. */
  get calls(): ReadonlyMap<string, Readonly<FakeCall>> {
    return this.callsBySid;
  }

  call(sid: string): Readonly<FakeCall> | undefined {
    return this.callsBySid.get(sid);
  }

  /**
   * Registers a call the fake did not create (an inbound call), in progress unless told otherwise,
   * on the default account unless `accountSid` names another.
   */
  addCall(call: FakeNewCall = {}): Readonly<FakeCall> {
    if (call.accountSid !== undefined) this.knownAccount(call.accountSid);
    if (call.sid !== undefined && this.callsBySid.has(call.sid)) throw new Error(`fake Twilio already has call ${call.sid}`);
    return this.register(call);
  }

  /**
   * Moves a call on as the phone network would (answered, the caller hung up...). `duration` (in
   * seconds, for an ended call) sets the answered time so the resource reports that duration.
   */
  setCallStatus(sid: string, status: FakeCallStatus, options: { duration?: number } = {}): void {
    const call = this.callsBySid.get(sid);
    if (call === undefined) throw new Error(`fake Twilio knows no call ${sid}`);
    const { duration } = options;
    if (duration !== undefined && (!ENDED.has(status) || !Number.isFinite(duration) || duration < 0)) {
      throw new Error('fake Twilio: a duration is a number of seconds >= 0, for an ended call');
    }
    this.applyStatus(call, status);
    if (duration !== undefined && call.endTime !== null) call.startTime = new Date(call.endTime.getTime() - duration * 1000);
  }

  /** The next `times` requests of `operation` fail (after the auth check), queued behind earlier ones. */
  failNext(operation: FakeTwilioFailableOperation, failure: FakeTwilioFailure, times = 1): this {
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

  private knownAccount(accountSid: string): FakeAccount {
    const account = this.accountsBySid.get(accountSid);
    if (account === undefined) throw new Error(`fake Twilio knows no account ${accountSid}`);
    return account;
  }

  private register(call: FakeNewCall): FakeCall {
    const now = new Date();
    const status = call.status ?? 'in-progress';
    const added: FakeCall = {
      sid: call.sid ?? newSid('CA'),
      accountSid: call.accountSid ?? this.accountSid,
      from: call.from ?? '+15550001111',
      to: call.to ?? '+15550002222',
      status,
      direction: call.direction ?? 'inbound',
      dateCreated: now,
      dateUpdated: now,
      startTime: status === 'queued' || status === 'ringing' ? null : now,
      endTime: ENDED.has(status) ? now : null,
      statusCallbackEvents: [],
      said: [],
    };
    this.callsBySid.set(added.sid, added);
    return added;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const method = req.method ?? '';
    const route = routeRequest(method, path);
    const recorded: RecordedTwilioRequest = {
      operation: route.operation,
      method,
      path,
      headers: req.headers,
      form: parseParams(Buffer.concat(chunks).toString('utf8')),
      query: parseParams(queryAt === -1 ? '' : url.slice(queryAt + 1)),
      accountSid: route.accountSid,
      callSid: route.callSid,
      phoneNumberSid: route.phoneNumberSid,
      authorized: this.isAuthorized(route.accountSid, req.headers.authorization),
      status: 0,
    };
    this.requests.push(recorded);

    if (!recorded.authorized) return this.sendError(res, recorded, AUTHENTICATION_ERROR);
    const { operation } = route;
    // Every known operation is under an account, and auth passed: that account exists.
    const account = this.accountsBySid.get(route.accountSid ?? '');
    if (operation === 'unknown' || account === undefined) return this.sendError(res, recorded, notFound(path));
    const failure = this.failures[operation].shift();
    if (failure === 'connection_reset') {
      res.socket?.destroy();
      return;
    }
    if (failure !== undefined) return this.sendError(res, recorded, this.failureError(failure, path));
    switch (operation) {
      case 'create_call':
        return this.createCall(res, recorded, account);
      case 'update_call':
        return this.updateCall(res, recorded, account);
      case 'fetch_call': {
        const call = this.callsBySid.get(route.callSid ?? '');
        if (call === undefined || call.accountSid !== account.sid) return this.sendError(res, recorded, notFound(path));
        return this.sendJson(res, recorded, 200, callResource(call));
      }
      case 'list_incoming_numbers': {
        const listed = incomingNumbersPage(account.sid, [...this.numbersBySid.values()], recorded.query);
        return 'error' in listed ? this.sendError(res, recorded, listed.error) : this.sendJson(res, recorded, 200, listed.page);
      }
      case 'fetch_incoming_number': {
        const number = this.numbersBySid.get(route.phoneNumberSid ?? '');
        if (number === undefined || number.accountSid !== account.sid) return this.sendError(res, recorded, notFound(path));
        return this.sendJson(res, recorded, 200, incomingNumberResource(number));
      }
      case 'fetch_account':
        return this.sendJson(res, recorded, 200, accountResource(account));
    }
  }

  /** Basic auth of the path's account; for a path with no account (a 404 after this), of any account. */
  private isAuthorized(pathAccountSid: string | undefined, header: string | undefined): boolean {
    if (pathAccountSid === undefined) return [...this.accountsBySid.values()].some((account) => header === basicAuthorization(account));
    const account = this.accountsBySid.get(pathAccountSid);
    return account !== undefined && header === basicAuthorization(account);
  }

  private failureError(failure: Exclude<FakeTwilioFailure, 'connection_reset'>, path: string): FakeTwilioError {
    if (failure === 'call_not_found' || failure === 'not_found') return notFound(path);
    if (failure === 'server_error') return INTERNAL_ERROR;
    return failure;
  }

  private createCall(res: ServerResponse, recorded: RecordedTwilioRequest, account: FakeAccount): void {
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
    const call = this.register({ accountSid: account.sid, to, from, status: 'queued', direction: 'outbound-api' });
    call.url = url;
    call.twiml = twiml;
    call.statusCallback = field(form, 'StatusCallback');
    call.statusCallbackEvents = fieldList(form, 'StatusCallbackEvent');
    call.machineDetection = field(form, 'MachineDetection');
    const timeout = field(form, 'Timeout');
    if (timeout !== undefined) call.timeout = Number(timeout);
    this.sendJson(res, recorded, 201, callResource(call));
  }

  private updateCall(res: ServerResponse, recorded: RecordedTwilioRequest, account: FakeAccount): void {
    const { form, path } = recorded;
    const sid = recorded.callSid ?? '';
    let call = this.callsBySid.get(sid);
    if (call === undefined && this.options.acceptUnknownCalls === true) call = this.register({ sid, accountSid: account.sid });
    // Twilio answers 20404 for a call that is over as well as for one that never existed (or is another account's).
    if (call === undefined || call.accountSid !== account.sid || ENDED.has(call.status)) return this.sendError(res, recorded, notFound(path));

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
    // As Twilio does once it accepted the update: the call leaves its conference, runs its new TwiML, reports its end.
    try {
      if (kind === 'hang_up') this.network.ended(call);
      else if (kind === 'redirect') this.network.redirected(call);
    } catch (error) {
      this.hookErrors.push(error);
    }
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
