import { TwilioCallerError } from './twilio-caller.error';
import { childElements, parseXml, textContent, XmlElement, XmlSyntaxError } from './xml-reader';

/** `<Connect><Stream url>` with its `<Parameter>`s: what the media socket must dial and present. */
export interface TwimlStream {
  /** Exactly as written in the TwiML (entities decoded): this string is what Twilio signs. */
  url: string;
  /** `<Parameter name value/>` pairs; Twilio hands them back in `start.customParameters`. */
  parameters: Record<string, string>;
  statusCallback?: string;
}

export interface TwimlVerb {
  name: string;
  attributes: Record<string, string>;
  text: string;
}

export interface ParsedTwiml {
  /** Top-level verbs of `<Response>` in document order. */
  verbs: TwimlVerb[];
  /** The bidirectional stream to open, or null when the response does not connect one. */
  stream: TwimlStream | null;
  /** True when the call would not reach a media stream (e.g. `<Say>…</Say><Hangup/>`, `<Reject/>`). */
  rejected: boolean;
  /** Everything `<Say>` would speak, joined by spaces: why the server turned the call away. */
  sayText: string;
  hangup: boolean;
}

/**
 * Reads a voice webhook response as Twilio would act on it. Only the parts a media-stream call
 * needs are interpreted; other verbs are listed in `verbs` so tests can assert on them.
 */
export function parseTwiml(xml: string): ParsedTwiml {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (error) {
    if (!(error instanceof XmlSyntaxError)) throw error;
    throw new TwilioCallerError('TWIML_INVALID', `The voice webhook answered malformed XML: ${error.message}`, {
      retryable: false,
      cause: error,
    });
  }
  if (root.name !== 'Response') {
    throw new TwilioCallerError('TWIML_INVALID', `TwiML root must be <Response>, got <${root.name}>`, {
      retryable: false,
    });
  }

  const verbElements = childElements(root);
  const verbs = verbElements.map((verb) => ({
    name: verb.name,
    attributes: verb.attributes,
    text: textContent(verb).trim(),
  }));
  const stream = findConnectStream(verbElements);
  return {
    verbs,
    stream,
    rejected: stream === null,
    sayText: verbs
      .filter((verb) => verb.name === 'Say')
      .map((verb) => verb.text)
      .join(' '),
    hangup: verbs.some((verb) => verb.name === 'Hangup' || verb.name === 'Reject'),
  };
}

function findConnectStream(verbElements: XmlElement[]): TwimlStream | null {
  for (const verb of verbElements) {
    // Twilio executes verbs in order: anything that ends the call before <Connect> wins.
    if (verb.name === 'Hangup' || verb.name === 'Reject') return null;
    if (verb.name !== 'Connect') continue;
    const streamElement = childElements(verb, 'Stream')[0];
    if (!streamElement) continue;
    const url = streamElement.attributes['url'];
    if (url === undefined || url === '') {
      throw new TwilioCallerError('TWIML_INVALID', '<Stream> has no url attribute', { retryable: false });
    }
    if (!/^wss:\/\//i.test(url) && !isLoopbackWsUrl(url)) {
      // Twilio only dials secure sockets; a ws:// URL would fail on a real call. Loopback ws:// is
      // the server's local-development mode, which only this simulator can reach anyway.
      throw new TwilioCallerError('TWIML_INVALID', `<Stream url="${url}"> must be a wss:// URL (ws:// only on loopback)`, {
        retryable: false,
      });
    }
    if (url.includes('?')) {
      throw new TwilioCallerError('TWIML_INVALID', `<Stream url="${url}"> must not carry a query string`, {
        retryable: false,
      });
    }
    const parameters: Record<string, string> = {};
    for (const parameter of childElements(streamElement, 'Parameter')) {
      const name = parameter.attributes['name'];
      if (name === undefined) {
        throw new TwilioCallerError('TWIML_INVALID', '<Parameter> without a name', { retryable: false });
      }
      parameters[name] = parameter.attributes['value'] ?? '';
    }
    const statusCallback = streamElement.attributes['statusCallback'];
    return statusCallback === undefined ? { url, parameters } : { url, parameters, statusCallback };
  }
  return null;
}

function isLoopbackWsUrl(url: string): boolean {
  if (!/^ws:\/\//i.test(url)) return false;
  try {
    const { hostname } = new URL(url);
    return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
  } catch {
    return false;
  }
}
