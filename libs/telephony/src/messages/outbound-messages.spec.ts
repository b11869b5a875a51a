import { buildClearMessage, buildMarkMessage, buildMediaMessage } from './outbound-messages';

const STREAM_SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';

describe('outbound messages', () => {
  it('builds a media message with the mu-law bytes as base64', () => {
    const mulaw = new Uint8Array(160).fill(0xff);
    mulaw[0] = 0x00;
    const text = buildMediaMessage(STREAM_SID, mulaw);
    expect(text).toBe(
      `{"event":"media","streamSid":"${STREAM_SID}","media":{"payload":"${Buffer.from(mulaw).toString('base64')}"}}`,
    );
    const parsed = JSON.parse(text) as { media: { payload: string } };
    expect(new Uint8Array(Buffer.from(parsed.media.payload, 'base64'))).toEqual(mulaw);
  });

  it('encodes only the bytes of a view, not its whole backing buffer', () => {
    const backing = new Uint8Array(480);
    for (let i = 0; i < backing.length; i += 1) backing[i] = i % 251;
    const frame = backing.subarray(160, 320);
    const parsed = JSON.parse(buildMediaMessage(STREAM_SID, frame)) as { media: { payload: string } };
    expect(Buffer.from(parsed.media.payload, 'base64').equals(Buffer.from(frame))).toBe(true);
  });

  it('builds mark and clear messages exactly', () => {
    expect(buildMarkMessage(STREAM_SID, 'r7:1840')).toBe(`{"event":"mark","streamSid":"${STREAM_SID}","mark":{"name":"r7:1840"}}`);
    expect(buildClearMessage(STREAM_SID)).toBe(`{"event":"clear","streamSid":"${STREAM_SID}"}`);
  });

  it('escapes caller-chosen text so the JSON stays valid', () => {
    const name = 'reply "7"\\ end\n';
    const parsed = JSON.parse(buildMarkMessage('MZ"x', name)) as { streamSid: string; mark: { name: string } };
    expect(parsed).toEqual({ event: 'mark', streamSid: 'MZ"x', mark: { name } });
  });
});
