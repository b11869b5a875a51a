export * from './twilio-caller';
