import type { VoicemailPlayback } from '../agent/voicemail-drop';
import { waitUntilPlayed } from '../playback/playback-wait';
import { voicemailPlaybackOf } from '../playback/voicemail-playback';
import type { ConversationRecorder } from '../records/conversation-records';
import { errorPayload } from '../records/event-payloads';
import type { AssistantReply } from './assistant-reply';
import type { ReplyTranscript } from './reply-transcript';

/**
 * Says a voicemail message with `reply` and waits, bounded like every playback wait, until it has
 * played; records what the machine heard of it (nothing once the call is over).
 */
export async function speakVoicemail(
  reply: AssistantReply,
  text: string,
  records: { recorder: ConversationRecorder; transcript: ReplyTranscript; isClosed(): boolean },
): Promise<VoicemailPlayback> {
  const end = await reply.speakScripted(text);
  if (end.kind === 'failed') records.recorder.event('tts_error', errorPayload(end.error));
  if (end.kind === 'completed') await waitUntilPlayed(reply.tracker);
  const closed = records.isClosed();
  const playback = voicemailPlaybackOf(text, reply.tracker, closed);
  if (!closed && playback.sentMs > 0) records.transcript.closing(reply, playback.heardInFull ? undefined : reply.tracker.heardTextFrom(0));
  return playback;
}

/** Says closing words with `reply` and, once the caller has heard them, records them. */
export async function speakClosingWords(reply: AssistantReply, text: string, transcript: ReplyTranscript): Promise<void> {
  const end = await reply.speakScripted(text);
  if (end.kind !== 'completed') return;
  await waitUntilPlayed(reply.tracker);
  transcript.closing(reply);
}
