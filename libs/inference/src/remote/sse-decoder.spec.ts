import { SseDecoder, type SseEvent } from './sse-decoder';

const encoder = new TextEncoder();

function decodeInPieces(pieces: Uint8Array[]): SseEvent[] {
  const decoder = new SseDecoder();
  const events = pieces.flatMap((piece) => decoder.push(piece));
  return [...events, ...decoder.end()];
}

function splitAt(bytes: Uint8Array, ...cuts: number[]): Uint8Array[] {
  const bounds = [0, ...cuts, bytes.length];
  return bounds.slice(1).map((end, i) => bytes.subarray(bounds[i], end));
}

describe('SseDecoder', () => {
  const stream =
    ': keep-alive\r\n\r\n' +
    'data: {"a":1}\n\n' +
    'event: update\r\ndata: first line\r\ndata: second line\r\nid: 7\r\n\r\n' +
    'data:no-space\r\rdata: caf\u00e9 \u2603 \u{1F600}\n\n' +
    'retry: 100\nunknown: x\ndata: [DONE]\n\n';
  const bytes = encoder.encode(stream);
  const expected: SseEvent[] = [
    { event: 'message', data: '{"a":1}' },
    { event: 'update', data: 'first line\nsecond line', id: '7' },
    { event: 'message', data: 'no-space', id: '7' },
    { event: 'message', data: 'caf\u00e9 \u2603 \u{1F600}', id: '7' },
    { event: 'message', data: '[DONE]', id: '7' },
  ];

  it('decodes LF, CRLF and CR line endings, multi-line data, event names, ids, and skips comments', () => {
    expect(decodeInPieces([bytes])).toEqual(expected);
  });

  it('gives the same events whichever byte the stream is split at (UTF-8 characters and CRLF included)', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      expect({ cut, events: decodeInPieces(splitAt(bytes, cut)) }).toEqual({ cut, events: expected });
    }
  });

  it('gives the same events when every byte arrives on its own', () => {
    const pieces = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    expect(decodeInPieces(pieces)).toEqual(expected);
  });

  it('gives the same events for every pair of split points', () => {
    // Two cuts catch state carried across more than one boundary (a CR then a lone LF piece).
    const short = encoder.encode('data: x\r\n\r\ndata: \u00e9\r\r');
    const want = [
      { event: 'message', data: 'x' },
      { event: 'message', data: '\u00e9' },
    ];
    for (let first = 1; first < short.length; first++) {
      for (let second = first + 1; second < short.length; second++) {
        expect({ first, second, events: decodeInPieces(splitAt(short, first, second)) }).toEqual({ first, second, events: want });
      }
    }
  });

  it('delivers a last event that has no closing blank line when the stream ends', () => {
    expect(decodeInPieces([encoder.encode('data: a\n\ndata: [DONE]')])).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: '[DONE]' },
    ]);
  });

  it('dispatches nothing for blank lines without data and for comment-only streams', () => {
    expect(decodeInPieces([encoder.encode('\n\n: ping\n\n:\n\nevent: x\n\n')])).toEqual([]);
  });
});
