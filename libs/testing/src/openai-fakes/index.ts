export { FakeOpenAiServer, type FakeOpenAiServerOptions } from './fake-openai-server';
export { chatCompletionEvents, sseData } from './chat-completion-chunks';
export type {
  FakeChatReply,
  FakeEndpoint,
  FakeFailure,
  FakeSpeechReply,
  FakeToolCall,
  FakeTranscriptionReply,
  RecordedRequest,
  ReplyScript,
} from './fake-openai-types';
