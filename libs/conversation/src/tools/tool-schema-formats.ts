import type { FormatDefinition } from 'ajv';
import addFormats, { type FormatName } from 'ajv-formats';
import { RE2JS } from 're2js';
import { isObject } from './tool-schema-walk';

/*
 * The `format`s a tool schema may use. ajv-formats' full mode runs JavaScript regexes on the model's
 * text, and some of them backtrack (url, full email/uri) or use lookarounds RE2 lacks (duration,
 * hostname): only these, each capped in length, run, with regexes on RE2. Unknown formats are ignored.
 */

/** A string format checked by RE2, with the regex taken from ajv-formats, after a length cap. */
function re2Format(name: FormatName, mode: 'fast' | 'full', maxChars: number): FormatDefinition<string> {
  const source = addFormats.get(name, mode);
  if (!(source instanceof RegExp)) throw new Error(`ajv-formats "${name}" (${mode}) is no longer a regular expression`);
  const re = RE2JS.compile(source.source, source.flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return { type: 'string', validate: (text) => text.length <= maxChars && re.test(text) };
}

/** One of ajv-formats' function formats (dates and times: short anchored regexes plus range checks), after a length cap. */
function cappedFormat(name: FormatName, maxChars: number): FormatDefinition<string> {
  const format = addFormats.get(name, 'full');
  const validate = isObject(format) ? format.validate : undefined;
  if (typeof validate !== 'function') throw new Error(`ajv-formats "${name}" is no longer a function format`);
  const check = validate as (text: string) => boolean;
  return { type: 'string', validate: (text) => text.length <= maxChars && check(text) };
}

const DURATION = RE2JS.compile('^P(?:(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?|\\d+W)$');
const HOSTNAME = RE2JS.compile(
  '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$',
  RE2JS.CASE_INSENSITIVE,
);

/**
 * The formats a tool schema may use; any other format name is ignored, as before. Not ajv-formats'
 * own set: several of its checks are JavaScript regexes run on model-written text, and some can
 * backtrack badly (`url`, full `email` and `uri` are long, nested patterns; `duration` and
 * `hostname` use lookaround, which RE2 lacks). So: OpenAI's formats plus a few common ones, each
 * capped in length, with every regex on RE2 (ajv-formats' own source where RE2 can compile it; fast
 * mode for `email`, `uri`, `uri-reference`; `duration` and `hostname` rewritten without
 * lookaround). Dropped: `url` (deprecated), `regex` (would compile model text with `new RegExp`),
 * `byte`, `uri-template`, `json-pointer-uri-fragment`.
 */
export const SAFE_FORMATS: Record<string, FormatDefinition<string> | FormatDefinition<number> | true> = {
  date: cappedFormat('date', 32),
  time: cappedFormat('time', 64),
  'date-time': cappedFormat('date-time', 64),
  'iso-time': cappedFormat('iso-time', 64),
  'iso-date-time': cappedFormat('iso-date-time', 64),
  // ajv-formats: `^P(?!$)(...|(\d+W)?)$` with `T(?=\d)`; the lookarounds become the two string checks.
  duration: { type: 'string', validate: (text) => text.length > 1 && text.length <= 64 && !text.endsWith('T') && DURATION.test(text) },
  email: re2Format('email', 'fast', 320),
  // ajv-formats: a lookahead `(?=.{1,253}\.?$)` caps the length; here it is a plain length check.
  hostname: {
    type: 'string',
    validate: (text) => {
      const name = text.endsWith('.') ? text.slice(0, -1) : text;
      return name.length >= 1 && name.length <= 253 && HOSTNAME.test(text);
    },
  },
  ipv4: re2Format('ipv4', 'full', 15),
  ipv6: re2Format('ipv6', 'full', 45),
  uuid: re2Format('uuid', 'full', 45),
  uri: re2Format('uri', 'fast', 8192),
  'uri-reference': re2Format('uri-reference', 'fast', 8192),
  'json-pointer': re2Format('json-pointer', 'full', 8192),
  'relative-json-pointer': re2Format('relative-json-pointer', 'full', 8192),
  int32: addFormats.get('int32') as FormatDefinition<number>,
  int64: addFormats.get('int64') as FormatDefinition<number>,
  float: addFormats.get('float') as FormatDefinition<number>,
  double: addFormats.get('double') as FormatDefinition<number>,
  password: true,
  binary: true,
};

