import { newSid } from '@switchboard/simulated-caller';
import type { FakeConferenceNoun } from './twiml-program';

export interface FakeConferenceParticipant {
  callSid: string;
  startConferenceOnEnter: boolean;
  endConferenceOnExit: boolean;
  /** What a waiting participant hears (the fake records it; Twilio fetches and plays it). */
  waitUrl?: string;
  joinedAt: Date;
  leftAt: Date | null;
}

/** A Twilio conference: `init` until a startConferenceOnEnter participant joins, then `in-progress`, then `completed`. */
export interface FakeConference {
  sid: string;
  accountSid: string;
  name: string;
  status: 'init' | 'in-progress' | 'completed';
  /** The first participant's statusCallback and events: Twilio uses the conference creator's. */
  statusCallback?: string;
  statusCallbackEvents: string[];
  /** Everyone who ever joined, in order (leftAt set once they left). */
  participants: FakeConferenceParticipant[];
}

/** A conference status callback to make. */
export interface ConferenceCallback {
  url: string;
  params: Record<string, string>;
}

/** What a join or a leave makes Twilio do. */
export interface ConferenceOutcome {
  callbacks: ConferenceCallback[];
  /** Calls whose <Dial><Conference> is over because the conference ended (their TwiML goes on). */
  dialEnded: string[];
}

/** Which callback event name each statusCallbackEvent entry subscribes to. */
const EVENT_OF: Record<string, string> = { join: 'participant-join', leave: 'participant-leave', start: 'conference-start', end: 'conference-end' };

/**
 * Twilio's conferences as far as warm transfers use them: named rooms per account, waiting
 * participants (startConferenceOnEnter false) held until one that starts it joins, the end when a
 * participant with endConferenceOnExit leaves (or the last one does), and the status callbacks each
 * step sends (participant-join/-leave with the participant's CallSid, conference-start/-end).
 */
export class FakeConferences {
  readonly all: FakeConference[] = [];
  private sequence = 0;

  /** The conference with this name that is not over (else the latest one of that name). */
  find(name: string, accountSid?: string): FakeConference | undefined {
    const named = this.all.filter((conference) => conference.name === name && (accountSid === undefined || conference.accountSid === accountSid));
    return named.find((conference) => conference.status !== 'completed') ?? named.at(-1);
  }

  /** The live conference the call is in, if any. */
  of(callSid: string): FakeConference | undefined {
    return this.all.find((conference) => conference.status !== 'completed' && conference.participants.some((p) => p.callSid === callSid && p.leftAt === null));
  }

  join(accountSid: string, callSid: string, noun: FakeConferenceNoun): ConferenceOutcome {
    let conference = this.all.find((candidate) => candidate.name === noun.name && candidate.accountSid === accountSid && candidate.status !== 'completed');
    if (!conference) {
      conference = {
        sid: newSid('CF'),
        accountSid,
        name: noun.name,
        status: 'init',
        ...(noun.statusCallback !== undefined && { statusCallback: noun.statusCallback }),
        statusCallbackEvents: noun.statusCallbackEvents,
        participants: [],
      };
      this.all.push(conference);
    }
    const participant: FakeConferenceParticipant = {
      callSid,
      startConferenceOnEnter: noun.startConferenceOnEnter,
      endConferenceOnExit: noun.endConferenceOnExit,
      ...(noun.waitUrl !== undefined && { waitUrl: noun.waitUrl }),
      joinedAt: new Date(),
      leftAt: null,
    };
    conference.participants.push(participant);
    const callbacks = this.callbacks(conference, 'join', participant);
    if (participant.startConferenceOnEnter && conference.status === 'init') {
      conference.status = 'in-progress';
      callbacks.push(...this.callbacks(conference, 'start'));
    }
    return { callbacks, dialEnded: [] };
  }

  /** The call leaves its conference (hung up, or redirected elsewhere); nothing happens when it is in none. */
  leave(callSid: string): ConferenceOutcome {
    const conference = this.of(callSid);
    if (!conference) return { callbacks: [], dialEnded: [] };
    const participant = conference.participants.find((p) => p.callSid === callSid && p.leftAt === null)!;
    participant.leftAt = new Date();
    const callbacks = this.callbacks(conference, 'leave', participant);
    const remaining = conference.participants.filter((p) => p.leftAt === null);
    if (!participant.endConferenceOnExit && remaining.length > 0) return { callbacks, dialEnded: [] };
    // The conference ends: everyone still in it is let go, each one's <Dial> is over.
    for (const other of remaining) {
      other.leftAt = new Date();
      callbacks.push(...this.callbacks(conference, 'leave', other));
    }
    conference.status = 'completed';
    callbacks.push(...this.callbacks(conference, 'end'));
    return { callbacks, dialEnded: remaining.map((p) => p.callSid) };
  }

  private callbacks(conference: FakeConference, event: 'join' | 'leave' | 'start' | 'end', participant?: FakeConferenceParticipant): ConferenceCallback[] {
    if (conference.statusCallback === undefined || !conference.statusCallbackEvents.includes(event)) return [];
    const params: Record<string, string> = {
      AccountSid: conference.accountSid,
      ConferenceSid: conference.sid,
      FriendlyName: conference.name,
      StatusCallbackEvent: EVENT_OF[event]!,
      SequenceNumber: String(++this.sequence),
      Timestamp: new Date().toUTCString().replace('GMT', '+0000'),
    };
    if (participant) {
      Object.assign(params, {
        CallSid: participant.callSid,
        StartConferenceOnEnter: String(participant.startConferenceOnEnter),
        EndConferenceOnExit: String(participant.endConferenceOnExit),
        Muted: 'false',
        Hold: 'false',
        Coaching: 'false',
      });
    }
    return [{ url: conference.statusCallback, params }];
  }
}
