export { CallAudioRecorder, type CallAudioRecorderOptions, type RecordingChannels } from './call-audio-recorder';
export { LocalRecordingStore } from './local-recording-store';
export { RecordingSpoolFile } from './recording-spool-file';
export { RecordingNotFoundError, type ByteRange, type RecordingReadStream, type RecordingStore } from './recording-store';
export { S3RecordingStore, type S3RecordingStoreOptions } from './s3-recording-store';
