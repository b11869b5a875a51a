import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import { CallTransferRepository } from '../../../libs/persistence/src/repositories/call-transfer.repository';
import { ConversationRecordRepository } from '../../../libs/persistence/src/repositories/conversation-record.repository';
import { WebhookOutbox } from '../../../libs/persistence/src/webhooks/webhook-outbox';
import { createRepositories, createTestPrisma } from '../../support/database';
import { createInboundCall } from './call-fixtures';

describe('CallTransferRepository: a warm transfer\'s state, the call\'s fresh stream token, the transcript read back', () => {
  const prisma = createTestPrisma(4);
  const repos = createRepositories(prisma);
  const transfers = new CallTransferRepository(prisma);

  afterAll(() => prisma.$disconnect());

  async function newTransfer() {
    const call = await createInboundCall(repos);
    const transfer = await transfers.create({ callId: call.callId, destination: '+15551230000', conferenceName: `switchboard-${call.callId}`, whisper: 'summary', summary: 'A summary.', answerTimeoutS: 30 });
    return { call, transfer };
  }

  it('moves a transfer on only from the states named, so of two racing callbacks one wins', async () => {
    const { call, transfer } = await newTransfer();
    expect(transfer).toMatchObject({ status: 'holding', humanCallSid: null, endedAt: null });
    expect(await transfers.attachHumanCall(transfer.id, `CA${'1'.repeat(32)}`)).toBe(true);
    expect(await transfers.advance(transfer.id, ['holding'], 'dialing')).toMatchObject({ status: 'dialing', endedAt: null });

    const [connected, returned] = await Promise.all([
      transfers.advance(transfer.id, ['dialing', 'answered'], 'connected'),
      transfers.advance(transfer.id, ['holding', 'dialing', 'answered'], 'returned'),
    ]);
    expect([connected, returned].filter((won) => won !== null)).toHaveLength(1);
    const settled = await transfers.findById(transfer.id);
    expect(settled?.endedAt).toBeInstanceOf(Date);
    // A transfer that is over takes no destination call any more.
    expect(await transfers.attachHumanCall(transfer.id, `CA${'2'.repeat(32)}`)).toBe(false);
    expect((await transfers.callOf(transfer.id))?.call).toMatchObject({ id: call.callId, twilioCallSid: call.callSid, direction: 'inbound', ended: false });
  });

  it('refuses a status, a whisper or a timeout outside the rules (CHECK constraints)', async () => {
    const { transfer } = await newTransfer();
    await expect(prisma.$executeRawUnsafe(`UPDATE call_transfers SET status = 'teleported' WHERE id = '${transfer.id}'`)).rejects.toThrow(/call_transfers_status_check/);
    await expect(prisma.$executeRawUnsafe(`UPDATE call_transfers SET answer_timeout_s = 600 WHERE id = '${transfer.id}'`)).rejects.toThrow(/call_transfers_answer_timeout_s_check/);
    await expect(prisma.$executeRawUnsafe(`UPDATE call_transfers SET whisper = 'shout' WHERE id = '${transfer.id}'`)).rejects.toThrow(/call_transfers_whisper_check/);
  });

  it('gives a live call a fresh single-use stream token after its stream was claimed, and never an ended one', async () => {
    const { call } = await newTransfer();
    const claim = () => repos.callStreams.claimMediaStream({ callId: call.callId, tokenHash: hashSecret('fresh-token'), streamSid: 'MZ2', now: new Date() });
    expect((await repos.callStreams.claimMediaStream({ callId: call.callId, tokenHash: hashSecret(call.rawToken), streamSid: 'MZ1', now: new Date() })).outcome).toBe('ok');
    expect(await transfers.reissueStreamToken(call.callId, hashSecret('fresh-token'), new Date(Date.now() + 60_000))).toBe(true);
    expect((await claim()).outcome).toBe('ok');
    expect((await claim()).outcome).toBe('reused');
    // The first stream's identity stays the call's.
    expect(await prisma.call.findUniqueOrThrow({ where: { id: call.callId } })).toMatchObject({ twilioStreamSid: 'MZ1' });

    await repos.callEnds.finalise(call.callId, { endReason: 'stream_stopped', endedAt: new Date() });
    expect(await transfers.reissueStreamToken(call.callId, hashSecret('later'), new Date(Date.now() + 60_000))).toBe(false);
  });

  it('reads the last turns back as the caller heard them, oldest first, with the next index', async () => {
    const { call } = await newTransfer();
    const records = new ConversationRecordRepository(prisma, new WebhookOutbox());
    await records.appendTranscriptTurns(call.callId, [
      { index: 0, role: 'assistant', source: 'first_message', text: 'Hello.', heardText: null, interrupted: false, startMs: 0, endMs: 10 },
      { index: 1, role: 'user', source: 'speech', text: 'Billing, please.', heardText: null, interrupted: false, startMs: 20, endMs: 30 },
      { index: 2, role: 'assistant', source: 'speech', text: 'Please hold while I connect you.', heardText: 'Please hold', interrupted: true, startMs: 40, endMs: 50 },
      { index: 3, role: 'assistant', source: 'voicemail', text: 'x', heardText: '', interrupted: true, startMs: 60, endMs: 70 },
    ]);
    expect(await transfers.recentTurns(call.callId, 2)).toEqual({ turns: [{ index: 2, role: 'assistant', text: 'Please hold' }], nextIndex: 4 });
    expect((await transfers.recentTurns(call.callId, 40)).turns.map((turn) => turn.text)).toEqual(['Hello.', 'Billing, please.', 'Please hold']);
    expect(await transfers.recentTurns('not-a-uuid', 40)).toEqual({ turns: [], nextIndex: 0 });
  });
});
