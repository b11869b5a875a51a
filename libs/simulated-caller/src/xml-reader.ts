/**
 * A small XML reader, enough for TwiML: elements, attributes (single or double quoted), text,
 * the five named entities and numeric character references, comments, CDATA, the XML declaration
 * and a DOCTYPE (skipped). No namespaces, no DTD entities. Malformed input throws XmlSyntaxError
 * with the offset, because a server that answers broken TwiML is exactly what the caller must catch.
 */

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
}

export type XmlNode = XmlElement | string;

export class XmlSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'XmlSyntaxError';
  }
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const NAME_PATTERN = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
const ATTRIBUTE_PATTERN = /\s*([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;

export function decodeXmlEntities(text: string, offset = 0): string {
  return text.replace(/&([^;&\s]*);?/g, (match: string, body: string, at: number) => {
    if (!match.endsWith(';')) throw new XmlSyntaxError(`Unterminated entity "${match}"`, offset + at);
    const named = NAMED_ENTITIES[body];
    if (named !== undefined) return named;
    const numeric = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(body);
    if (numeric) {
      const codePoint = numeric[1] !== undefined ? parseInt(numeric[1], 16) : parseInt(numeric[2] ?? '', 10);
      if (codePoint <= 0x10ffff) return String.fromCodePoint(codePoint);
    }
    throw new XmlSyntaxError(`Unknown entity "${match}"`, offset + at);
  });
}

/** Parses a document and returns its root element. */
export function parseXml(xml: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let position = 0;

  const appendText = (text: string, at: number, decode: boolean): void => {
    const parent = stack[stack.length - 1];
    if (!parent) {
      if (text.trim() !== '') throw new XmlSyntaxError('Text outside the root element', at);
      return;
    }
    parent.children.push(decode ? decodeXmlEntities(text, at) : text);
  };

  const skipPast = (terminator: string, what: string): void => {
    const end = xml.indexOf(terminator, position);
    if (end < 0) throw new XmlSyntaxError(`Unterminated ${what}`, position);
    position = end + terminator.length;
  };

  while (position < xml.length) {
    const tagStart = xml.indexOf('<', position);
    if (tagStart < 0) {
      appendText(xml.slice(position), position, true);
      break;
    }
    if (tagStart > position) appendText(xml.slice(position, tagStart), position, true);
    position = tagStart;

    if (xml.startsWith('<?', position)) skipPast('?>', 'processing instruction');
    else if (xml.startsWith('<!--', position)) skipPast('-->', 'comment');
    else if (xml.startsWith('<![CDATA[', position)) {
      const end = xml.indexOf(']]>', position);
      if (end < 0) throw new XmlSyntaxError('Unterminated CDATA section', position);
      appendText(xml.slice(position + 9, end), position, false);
      position = end + 3;
    } else if (xml.startsWith('<!', position)) skipPast('>', 'declaration');
    else if (xml.startsWith('</', position)) {
      NAME_PATTERN.lastIndex = position + 2;
      const name = NAME_PATTERN.exec(xml)?.[0];
      const open = stack.pop();
      if (!name || !open || open.name !== name) {
        throw new XmlSyntaxError(`Unexpected closing tag </${name ?? ''}>`, position);
      }
      position = NAME_PATTERN.lastIndex;
      const close = /\s*>/y;
      close.lastIndex = position;
      if (!close.exec(xml)) throw new XmlSyntaxError(`Malformed closing tag </${name}>`, position);
      position = close.lastIndex;
    } else {
      position = readStartTag(xml, position, stack, (element) => {
        if (root) throw new XmlSyntaxError('More than one root element', position);
        root = element;
      });
    }
  }
  const unclosed = stack[stack.length - 1];
  if (unclosed) throw new XmlSyntaxError(`Element <${unclosed.name}> is not closed`, xml.length);
  if (!root) throw new XmlSyntaxError('No root element', 0);
  return root;
}

function readStartTag(
  xml: string,
  tagStart: number,
  stack: XmlElement[],
  setRoot: (element: XmlElement) => void,
): number {
  NAME_PATTERN.lastIndex = tagStart + 1;
  const name = NAME_PATTERN.exec(xml)?.[0];
  if (!name) throw new XmlSyntaxError('Malformed tag', tagStart);
  let position = NAME_PATTERN.lastIndex;
  const attributes: Record<string, string> = {};
  for (;;) {
    ATTRIBUTE_PATTERN.lastIndex = position;
    const attribute = ATTRIBUTE_PATTERN.exec(xml);
    if (!attribute) break;
    const [, attributeName = '', doubleQuoted, singleQuoted] = attribute;
    if (attributeName in attributes) throw new XmlSyntaxError(`Duplicate attribute ${attributeName}`, position);
    attributes[attributeName] = decodeXmlEntities(doubleQuoted ?? singleQuoted ?? '', position);
    position = ATTRIBUTE_PATTERN.lastIndex;
  }
  const end = /\s*(\/?)>/y;
  end.lastIndex = position;
  const tagEnd = end.exec(xml);
  if (!tagEnd) throw new XmlSyntaxError(`Malformed start tag <${name}>`, position);

  const element: XmlElement = { name, attributes, children: [] };
  const parent = stack[stack.length - 1];
  if (parent) parent.children.push(element);
  else setRoot(element);
  if (tagEnd[1] !== '/') stack.push(element);
  return end.lastIndex;
}

/** Concatenated text content of an element and its descendants. */
export function textContent(node: XmlNode): string {
  return typeof node === 'string' ? node : node.children.map(textContent).join('');
}

export function childElements(element: XmlElement, name?: string): XmlElement[] {
  return element.children.filter(
    (child): child is XmlElement => typeof child !== 'string' && (name === undefined || child.name === name),
  );
}
