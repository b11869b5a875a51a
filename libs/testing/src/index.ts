/**
 * @switchboard/testing: test-only code (fakes of the services the product talks to, stand-in ONNX
 * models, scripted engines and harnesses). Imported by specs, test/ and the dev-only benchmark and
 * stand-in model CLIs; a lint rule keeps it out of production code.
 */
export * from './openai-fakes';
export * from './realtime-fake';
export * from './models';
export * from './twilio-rest-fake';
export * from './stand-in-models';
export { FakeScheduler } from './caller-doubles/fake-scheduler';
export { LoopbackMediaServer, type LoopbackSession, type RecordedWebhook } from './caller-doubles/loopback-media-server';
export { freeLoopbackPort } from './net/free-port';
export { readRequestBody } from './net/read-request-body';
export { delay, startLocalHttpServer, type LocalHandler, type LocalHttpServer } from './net/local-http-server';
export { CONVERSIONS, KERNELS, concat as concatInt16, resampleInChunks, resampleInFrames } from './audio/resampler-runs';
export {
  ACCOUNT_SID as HARNESS_ACCOUNT_SID,
  CALL_SID as HARNESS_CALL_SID,
  STREAM_SID as HARNESS_STREAM_SID,
  TOKEN as HARNESS_STREAM_TOKEN,
  FakeTwilio,
  RecordingHandler,
  frame as mulawFrame,
  setup as setupMediaStreamSession,
  started as startedMediaStreamSession,
} from './telephony/media-stream-session-harness';
export { GATHER_TABLE, writeGatherModel } from './inference/gather-model';
export { SPEECH_FIXTURES, concat as concatSpeech, loadSpeech8k, pushInFrames, silence, silentLogger, speechBoundsMs, whiteNoise, type SpeechFixture } from './inference/speech-fixtures';
export * from './conversation/pipeline-fakes';
export * from './conversation/realtime-fakes';
export * from './conversation/fake-business-endpoint';
