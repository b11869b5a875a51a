import { validateRequest } from 'twilio';
import { LoopbackMediaServer } from '@switchboard/testing';
import { placeCall } from './place-call';
import { MULAW_SILENCE } from '@switchboard/audio';

// Real sockets, real time: every call here lasts well under a second of paced audio.
const AUTH_TOKEN = 'test-auth-token-0123456789abcdef';
const PUBLIC_BASE_URL = 'https://public.example.test';
const ACCOUNT_SID = 'AC' + '1'.repeat(32);

/** A recognisable caller utterance: a ramp of mu-law codes that never hits silence (0xff). */
function utterance(bytes: number): Uint8Array {
  return new Uint8Array(bytes).map((_, index) => 0x10 + (index % 0x60));
}

function indexOfSequence(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let start = 0; start + needle.length <= haystack.length; start += 1) {
    for (let offset = 0; offset < needle.length; offset += 1) {
      if (haystack[start + offset] !== needle[offset]) continue outer;
    }
    return start;
  }
  return -1;
}

describe('placeCall against a loopback server (real HTTP + WebSocket)', () => {
  let server: LoopbackMediaServer;
  const callOptions = () => ({
    serverUrl: server.url,
    publicBaseUrl: PUBLIC_BASE_URL,
    authToken: AUTH_TOKEN,
    accountSid: ACCOUNT_SID,
    from: '+15550001111',
    to: '+15550002222',
  });

  afterEach(async () => {
    await server.stop();
  });

  it('dials with signed requests and streams paced frames exactly as Twilio does', async () => {
    server = new LoopbackMediaServer({
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      onMessage: (session, message) => {
        if (message['event'] === 'media' && message['media'].chunk === '5') {
          session.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'after-5' } });
        }
      },
    });
    await server.start();
    const audio = utterance(400); // 2.5 frames
    const result = await placeCall({ ...callOptions(), audio, trailingSilenceMs: 200, statusCallbacks: true, awaitEchoMs: 5_000 });

    // Webhook: signed over the public URL, realistic params, verified by twilio's validateRequest.
    expect(server.voiceRequests).toHaveLength(1);
    const voice = server.voiceRequests[0];
    expect(voice?.signatureValid).toBe(true);
    expect(voice?.params).toMatchObject({ AccountSid: ACCOUNT_SID, CallStatus: 'ringing', Direction: 'inbound', To: '+15550002222' });
    expect(validateRequest(AUTH_TOKEN, voice?.signature ?? '', `${PUBLIC_BASE_URL}/twilio/voice`, voice?.params ?? {})).toBe(true);
    expect(server.upgradeSignatures).toEqual([{ signature: expect.any(String), valid: true }]);

    // Status callbacks at answer and at the end, signed, numbered from 0.
    expect(server.statusRequests.map((request) => [request.params['CallStatus'], request.params['SequenceNumber'], request.signatureValid])).toEqual([
      ['in-progress', '0', true],
      ['completed', '1', true],
    ]);
    expect(server.statusRequests[1]?.params).toMatchObject({ CallSid: result.callSid, CallDuration: expect.stringMatching(/^[1-9]$/), Duration: '1' });

    // Media socket: connected, start, media..., stop, with string numbers throughout.
    const session = server.sessions[0];
    const messages = session?.messages ?? [];
    expect(messages[0]).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    expect(messages[1]).toMatchObject({
      event: 'start',
      sequenceNumber: '1',
      streamSid: result.streamSid,
      start: {
        accountSid: ACCOUNT_SID,
        callSid: result.callSid,
        tracks: ['inbound'],
        customParameters: { token: expect.any(String) },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    expect(result.streamSid).toMatch(/^MZ[0-9a-f]{32}$/);
    expect(messages[messages.length - 1]).toEqual({
      event: 'stop',
      sequenceNumber: String(messages.length - 1),
      streamSid: result.streamSid,
      stop: { accountSid: ACCOUNT_SID, callSid: result.callSid },
    });
    // Every message after `connected` carries the next sequence number.
    expect(messages.slice(1).map((message) => message['sequenceNumber'])).toEqual(
      messages.slice(1).map((_, index) => String(index + 1)),
    );
    const media = messages.filter((message) => message['event'] === 'media');
    expect(media.length).toBeGreaterThanOrEqual(3 + 10); // audio frames + 200 ms of trailing silence
    media.forEach((message, index) => {
      expect(message['media'].track).toBe('inbound');
      expect(message['media'].chunk).toBe(String(index + 1));
      expect(message['media'].timestamp).toBe(String((index + 1) * 20));
      expect(Buffer.from(message['media'].payload, 'base64')).toHaveLength(160);
    });
    const sentAudio = Buffer.concat(media.slice(0, 3).map((message) => Buffer.from(message['media'].payload, 'base64')));
    expect([...sentAudio.subarray(0, 400)]).toEqual([...audio]);
    expect(sentAudio.subarray(400).every((byte) => byte === MULAW_SILENCE)).toBe(true);

    // The server's mark came back once the echoed audio queued before it had played.
    const echoedMarks = messages.filter((message) => message['event'] === 'mark');
    expect(echoedMarks).toEqual([
      { event: 'mark', sequenceNumber: expect.any(String), streamSid: result.streamSid, mark: { name: 'after-5' } },
    ]);
    expect(result.marksEchoed).toEqual([{ name: 'after-5', reason: 'played' }]);

    // What came back and what was heard.
    expect(result.rejected).toBe(false);
    expect(result.protocolErrors).toEqual([]);
    expect(result).toMatchObject({ closeCode: 1000, closedBy: 'caller' });
    expect(result.receivedMulaw.length).toBe(result.latency.framesReceived * 160);
    // The echo arrives frame by frame in real time, so network jitter leaves short silent gaps
    // between frames on the played timeline (as it would on a phone); without them, it is the utterance.
    const playedSound = result.playedMulaw.filter((byte) => byte !== MULAW_SILENCE);
    expect(indexOfSequence(playedSound, audio)).toBe(0);
    expect(indexOfSequence(result.playedMulaw, audio.subarray(0, 100))).toBeGreaterThan(0);
    expect(result.played).toBeInstanceOf(Int16Array);
    expect(result.played.length).toBe(result.playedMulaw.length);
    expect(result.latency).toMatchObject({
      framesSent: media.length,
      bytesSent: media.length * 160,
      marksReceived: 1,
      marksEchoed: 1,
      marksCleared: 0,
      clears: 0,
      protocolErrors: 0,
    });
    expect(result.latency.framesReceived).toBe(media.length); // every frame's echo, waited for before stop
    expect(result.latency.firstEchoMs).toBeGreaterThanOrEqual(0);
    expect(result.latency.firstEchoMs).toBeLessThan(200);
    expect(result.latency.turns).toHaveLength(1);
    expect(result.latency.replyAfterSpeechMs).toBeGreaterThanOrEqual(0);
    expect(result.latency.durationMs).toBeGreaterThanOrEqual(media.length * 20 - 1);
  });

  it('honours clear: queued audio is dropped and its outstanding mark comes back at once', async () => {
    const tone = new Uint8Array(16_000).fill(0x42); // 2 s of agent audio sent in one go
    let clearSentAtFrame = -1;
    server = new LoopbackMediaServer({
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      echo: false,
      onMessage: (session, message) => {
        if (message['event'] !== 'media') return;
        if (message['media'].chunk === '2') {
          session.send({ event: 'media', streamSid: session.streamSid, media: { payload: Buffer.from(tone).toString('base64') } });
          session.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'long-reply' } });
        }
        if (message['media'].chunk === '10') {
          clearSentAtFrame = session.messages.length;
          session.send({ event: 'clear', streamSid: session.streamSid });
        }
      },
    });
    await server.start();
    const result = await placeCall({ ...callOptions(), audio: utterance(160), trailingSilenceMs: 300 });

    const messages = server.sessions[0]?.messages ?? [];
    const markIndex = messages.findIndex((message) => message['event'] === 'mark');
    expect(markIndex).toBeGreaterThanOrEqual(clearSentAtFrame);
    expect(messages[markIndex]?.['mark']).toEqual({ name: 'long-reply' });
    expect(result.marksEchoed).toEqual([{ name: 'long-reply', reason: 'cleared' }]);
    expect(result.latency).toMatchObject({ clears: 1, marksCleared: 1, marksEchoed: 0, bytesReceived: 16_000 });

    // About 8 frames (160 ms) of the tone played before the clear; the rest never did.
    const tonePlayed = result.playedMulaw.filter((byte) => byte === 0x42).length;
    expect(tonePlayed).toBeGreaterThan(0);
    expect(tonePlayed).toBeLessThan(16_000 / 4);
    expect(result.latency.bytesCleared + tonePlayed).toBe(16_000);
    expect(result.received.length).toBe(16_000);
  });

  describe('awaitReply: listening until the agent has finished', () => {
    const REPLY_BYTE = 0x42;
    /** Seconds of an agent's audible reply, as one payload. */
    const reply = (bytes: number) => Buffer.from(new Uint8Array(bytes).fill(REPLY_BYTE)).toString('base64');
    const isSilentFrame = (message: Record<string, any>) =>
      message['event'] === 'media' && Buffer.from(message['media'].payload, 'base64').every((byte) => byte === MULAW_SILENCE);

    it('hangs up only once a reply in two parts (the second sent when the first was heard) has played to its end', async () => {
      let replied = false;
      server = new LoopbackMediaServer({
        authToken: AUTH_TOKEN,
        publicBaseUrl: PUBLIC_BASE_URL,
        echo: false,
        onMessage: (session, message) => {
          // The caller's speech is over at its first silent frame: the agent answers, in two sentences.
          if (!replied && isSilentFrame(message)) {
            replied = true;
            session.send({ event: 'media', streamSid: session.streamSid, media: { payload: reply(4000) } });
            session.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'first' } });
          }
          if (message['event'] === 'mark' && message['mark'].name === 'first') {
            session.send({ event: 'media', streamSid: session.streamSid, media: { payload: reply(4000) } });
            session.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'second' } });
          }
        },
      });
      await server.start();
      const result = await placeCall({ ...callOptions(), audio: utterance(800), awaitReply: { tailMs: 200, timeoutMs: 20_000 } });

      expect(result.replyWait).toMatchObject({ outcome: 'ended', replyHeard: true });
      expect(result.closedBy).toBe('caller');
      // Every byte of both parts was heard, and both marks came back as played before the hang-up.
      expect(result.playedMulaw.filter((byte) => byte === REPLY_BYTE)).toHaveLength(8000);
      expect(result.marksEchoed).toEqual([
        { name: 'first', reason: 'played' },
        { name: 'second', reason: 'played' },
      ]);
      const messages = server.sessions[0]?.messages ?? [];
      expect(messages.findIndex((message) => message['event'] === 'stop')).toBeGreaterThan(
        messages.findIndex((message) => message['event'] === 'mark' && message['mark'].name === 'second'),
      );
    });

    it('after a clear (the agent stopped for the caller), waits for the answer that follows it', async () => {
      let framesSinceClear: number | undefined;
      server = new LoopbackMediaServer({
        authToken: AUTH_TOKEN,
        publicBaseUrl: PUBLIC_BASE_URL,
        echo: false,
        onMessage: (session, message) => {
          if (message['event'] !== 'media') return;
          // A greeting the caller talked over is cut at once ...
          if (framesSinceClear === undefined && isSilentFrame(message)) {
            framesSinceClear = 0;
            session.send({ event: 'media', streamSid: session.streamSid, media: { payload: reply(8000) } });
            session.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'greeting' } });
            session.send({ event: 'clear', streamSid: session.streamSid });
            return;
          }
          // ... and the answer takes the agent 30 of the caller's frames (600 ms, three times the tail) to start.
          if (framesSinceClear !== undefined && ++framesSinceClear === 30) {
            session.send({ event: 'media', streamSid: session.streamSid, media: { payload: reply(2400) } });
            session.send({ event: 'mark', streamSid: session.streamSid, mark: { name: 'answer' } });
          }
        },
      });
      await server.start();
      const result = await placeCall({ ...callOptions(), audio: utterance(800), awaitReply: { tailMs: 200, timeoutMs: 20_000 } });
      expect(result.replyWait).toMatchObject({ outcome: 'ended', replyHeard: true });
      expect(result.marksEchoed).toEqual([
        { name: 'greeting', reason: 'cleared' },
        { name: 'answer', reason: 'played' },
      ]);
    });

    it("ends after an echo's reply although the echo goes on sending the line's silence back", async () => {
      server = new LoopbackMediaServer({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL });
      await server.start();
      const audio = utterance(800);
      const result = await placeCall({ ...callOptions(), audio, awaitReply: { tailMs: 200, timeoutMs: 20_000 } });
      expect(result.replyWait).toMatchObject({ outcome: 'ended', replyHeard: true });
      // The whole echo was heard (frame by frame, with the line's jitter in between).
      expect(result.playedMulaw.filter((byte) => byte !== MULAW_SILENCE)).toHaveLength(audio.length);
    });

    it('gives up at timeoutMs on an agent that never stops talking', async () => {
      server = new LoopbackMediaServer({
        authToken: AUTH_TOKEN,
        publicBaseUrl: PUBLIC_BASE_URL,
        echo: false,
        onMessage: (session, message) => {
          if (message['event'] === 'media') session.send({ event: 'media', streamSid: session.streamSid, media: { payload: reply(160) } });
        },
      });
      await server.start();
      const result = await placeCall({ ...callOptions(), audio: utterance(160), awaitReply: { tailMs: 200, timeoutMs: 500 } });
      expect(result.replyWait).toMatchObject({ outcome: 'timed_out', replyHeard: true });
      expect(result.closedBy).toBe('caller');
    });

    it('refuses a fixed trailing silence and awaitReply together', async () => {
      server = new LoopbackMediaServer({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL });
      await server.start();
      await expect(placeCall({ ...callOptions(), audio: utterance(160), trailingSilenceMs: 100, awaitReply: {} })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });
  });

  it('reports a <Say><Hangup/> answer as rejected without opening a media socket', async () => {
    server = new LoopbackMediaServer({
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      voiceTwiml: () =>
        '<?xml version="1.0" encoding="UTF-8"?><Response><Say>This number &amp; agent are not in service.</Say><Hangup/></Response>',
    });
    await server.start();
    const result = await placeCall({ ...callOptions(), audio: utterance(160), statusCallbacks: true });
    expect(result).toMatchObject({
      rejected: true,
      sayText: 'This number & agent are not in service.',
      closeCode: null,
      closedBy: null,
    });
    expect(result.played).toHaveLength(0);
    expect(server.upgradeSignatures).toHaveLength(0);
    expect(server.statusRequests.map((request) => request.params['CallStatus'])).toEqual(['completed']);
    expect(server.statusRequests[0]?.params['CallDuration']).toBe('0');
  });

  it('resolves early when the server ends the call, and sends DTMF between frames', async () => {
    server = new LoopbackMediaServer({
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      onMessage: (session, message) => {
        if (message['event'] === 'dtmf') session.close(1000);
      },
    });
    await server.start();
    const startedAt = performance.now();
    const result = await placeCall({
      ...callOptions(),
      audio: utterance(1600),
      trailingSilenceMs: 5000,
      dtmf: [{ digit: '7', atMs: 60 }],
    });
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(result).toMatchObject({ closedBy: 'server', closeCode: 1000 });
    expect(result.utterances).toEqual([expect.objectContaining({ completed: false })]);
    const messages = server.sessions[0]?.messages ?? [];
    const dtmf = messages.find((message) => message['event'] === 'dtmf');
    expect(dtmf).toMatchObject({ streamSid: result.streamSid, dtmf: { track: 'inbound_track', digit: '7' } });
    // The press falls in the 4th frame (60-80 ms), so it goes out right after the 3rd.
    expect(messages.filter((message) => message['event'] === 'media').map((message) => message['media'].chunk).slice(0, 3)).toEqual([
      '1',
      '2',
      '3',
    ]);
    expect(messages[messages.indexOf(dtmf as Record<string, unknown>) - 1]?.['media']?.chunk).toBe('3');
    expect(messages.some((message) => message['event'] === 'stop')).toBe(false);
  });
});
