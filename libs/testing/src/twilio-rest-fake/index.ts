export { FakeTwilioRestServer, type FakeNewCall, type FakeTwilioRestServerOptions } from './fake-twilio-rest-server';
export type { FakeNewAccount } from './account-resource';
export type {
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
export type { FakeConference, FakeConferenceParticipant } from './fake-conferences';
export type { FakeWebhookDelivery } from './fake-webhook-sender';
export { readTwimlProgram, type FakeConferenceNoun, type TwimlProgram } from './twiml-program';
