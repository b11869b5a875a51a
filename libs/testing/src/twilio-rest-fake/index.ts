export { FakeTwilioRestServer, type FakeTwilioRestServerOptions } from './fake-twilio-rest-server';
export type {
  FakeCall,
  FakeCallStatus,
  FakeCallUpdate,
  FakeTwilioError,
  FakeTwilioFailure,
  FakeTwilioOperation,
  RecordedTwilioRequest,
} from './fake-twilio-rest-types';
