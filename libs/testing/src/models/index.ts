export { HubFileServer } from './hub-file-server';
export type { HubFixtureFile, HubFileServerOptions, RecordedHubRequest } from './hub-file-server';
