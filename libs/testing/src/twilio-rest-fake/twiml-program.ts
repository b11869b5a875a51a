import { childElements, parseTwiml, parseXml, textContent, type TwimlStream, type XmlElement } from '@switchboard/simulated-caller';

/** `<Dial><Conference>` as Twilio reads it, with Twilio's defaults for what the TwiML leaves out. */
export interface FakeConferenceNoun {
  name: string;
  /** Twilio's default: true (the conference starts when this participant joins). */
  startConferenceOnEnter: boolean;
  /** Twilio's default: false. */
  endConferenceOnExit: boolean;
  waitUrl?: string;
  waitMethod?: string;
  statusCallback?: string;
  /** `join`, `leave`, `start`, `end`, ... (space-separated in the TwiML). */
  statusCallbackEvents: string[];
}

/** What the fake does with a call's TwiML: what it says, and where the call goes next. */
export interface TwimlProgram {
  /** Every <Say>, in order, before the call goes anywhere. */
  says: string[];
  /** <Dial><Conference>: the call joins this conference. */
  conference?: FakeConferenceNoun;
  /** <Dial>+1555...</Dial>: the call is connected to this number (a cold transfer). */
  dialNumber?: string;
  /** <Connect><Stream>: the call opens this media stream (the test opens it, as Twilio would). */
  stream: TwimlStream | null;
  hangup: boolean;
}

function bool(value: string | undefined, fallback: boolean): boolean {
  return value === undefined ? fallback : value.toLowerCase() === 'true';
}

/** Reads the TwiML the fake acts on; other verbs are ignored, malformed XML throws (as Twilio reports an error). */
export function readTwimlProgram(xml: string): TwimlProgram {
  const root = parseXml(xml);
  if (root.name !== 'Response') throw new Error(`TwiML root must be <Response>, got <${root.name}>`);
  const program: TwimlProgram = { says: [], stream: parseTwiml(xml).stream, hangup: false };
  for (const verb of childElements(root)) {
    if (verb.name === 'Say') program.says.push(textContent(verb).trim());
    else if (verb.name === 'Hangup' || verb.name === 'Reject') program.hangup = true;
    else if (verb.name === 'Dial') readDial(verb, program);
    // Twilio runs verbs in order: a <Dial> or <Connect> holds the call until it ends.
    if (program.conference || program.dialNumber || program.stream || program.hangup) break;
  }
  return program;
}

function readDial(dial: XmlElement, program: TwimlProgram): void {
  const conference = childElements(dial, 'Conference')[0];
  if (conference) {
    const a = conference.attributes;
    program.conference = {
      name: textContent(conference).trim(),
      startConferenceOnEnter: bool(a['startConferenceOnEnter'], true),
      endConferenceOnExit: bool(a['endConferenceOnExit'], false),
      ...(a['waitUrl'] !== undefined && { waitUrl: a['waitUrl'] }),
      ...(a['waitMethod'] !== undefined && { waitMethod: a['waitMethod'] }),
      ...(a['statusCallback'] !== undefined && { statusCallback: a['statusCallback'] }),
      statusCallbackEvents: (a['statusCallbackEvent'] ?? '').split(/[\s,]+/).filter((event) => event.length > 0),
    };
    return;
  }
  const number = childElements(dial, 'Number')[0];
  const text = (number ? textContent(number) : textContent(dial)).trim();
  if (text.length > 0) program.dialNumber = text;
}
