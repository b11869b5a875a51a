import type { Options } from 'ajv';
import { RE2JS } from 're2js';

type RegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

function isHex(text: string): boolean {
  return text.length > 0 && /^[0-9a-fA-F]+$/.test(text);
}

/**
 * JSON Schema patterns are ECMAScript syntax; RE2 spells `\uXXXX` and `\u{X}` as `\x{X}` (a
 * surrogate pair as one code point). Only that is rewritten: everything RE2 reads differently
 * (backreferences, lookaround, `\k<name>`) is refused by RE2 rather than quietly reinterpreted.
 */
function toRe2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char !== '\\' || pattern[i + 1] !== 'u') {
      out += char;
      if (char === '\\' && i + 1 < pattern.length) out += pattern[++i]!;
      continue;
    }
    const close = pattern[i + 2] === '{' ? pattern.indexOf('}', i + 3) : -1;
    if (close !== -1 && isHex(pattern.slice(i + 3, close))) {
      out += `\\x{${pattern.slice(i + 3, close)}}`;
      i = close;
    } else if (isHex(pattern.slice(i + 2, i + 6)) && pattern.slice(i + 2, i + 6).length === 4) {
      let code = parseInt(pattern.slice(i + 2, i + 6), 16);
      const low = pattern.slice(i + 6, i + 12);
      if (code >= 0xd800 && code <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(low)) {
        code = 0x10000 + ((code - 0xd800) << 10) + (parseInt(low.slice(2), 16) - 0xdc00);
        i += 6;
      }
      out += `\\x{${code.toString(16)}}`;
      i += 5;
    } else {
      out += '\\u';
      i += 1;
    }
  }
  return out;
}

/** Throws RE2's syntax error (backreference, lookaround, bad repeat, ...) when RE2 cannot run `pattern`. */
export function compileRe2(pattern: string): RE2JS {
  return RE2JS.compile(toRe2Syntax(pattern));
}

/**
 * Ajv's `code.regExp`: every `pattern` and `patternProperties` key is compiled here, never with
 * `new RegExp`. Ajv only passes flags '' or 'u'; RE2 always matches by code point, as 'u' does.
 * `toString` must differ per pattern: Ajv shares compiled patterns between keywords by that key.
 * `code` would only be used to emit standalone validation code, which is never done here.
 */
export const re2RegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileRe2(pattern);
    return { test: (text: string) => re.test(text), toString: () => `re2:/${pattern}/` };
  },
  { code: 'require("re2js").RE2JS.compile' },
);

