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
