export * from './twilio-caller';
export * from './openai-fakes';
export * from './realtime-fake';
export * from './models';
export * from './twilio-rest-fake';
export { freeLoopbackPort } from './net/free-port';
export { readRequestBody } from './net/read-request-body';
