export { FakeRealtimeConnection, type FakeAutoTurn, type FakeRealtimeProtocol, type FakeResponseOutcome } from './fake-realtime-connection';
export { DEFAULT_FAKE_USAGE, recognisableMulawChunks, type FakeResponseScript } from './fake-realtime-script';
export { FAKE_REALTIME_PATH, FakeRealtimeServer, type FakeRealtimeServerOptions, type FakeUpgradeRecord } from './fake-realtime-server';
