import { encodeMultipart } from './multipart-body';

describe('encodeMultipart', () => {
  it('is read back field by field, file included, by a standard multipart parser', async () => {
    const data = new Uint8Array([0, 1, 2, 13, 10, 45, 45, 255]);
    const prompt = 'Names: "Ana"\r\n--not-a-boundary\r\nümlauts';
    const { contentType, body } = encodeMultipart({ model: 'whisper-1', prompt }, { name: 'file', fileName: 'audio.wav', contentType: 'audio/wav', data });
    expect(contentType).toMatch(/^multipart\/form-data; boundary=----switchboard[0-9a-f]{24}$/);
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    expect(form.get('model')).toBe('whisper-1');
    expect(form.get('prompt')).toBe(prompt);
    const file = form.get('file') as File;
    expect(file.name).toBe('audio.wav');
    expect(file.type).toBe('audio/wav');
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(data);
  });

  it('sends only the file bytes of a view into a larger buffer', async () => {
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    const { contentType, body } = encodeMultipart({}, { name: 'file', fileName: 'a.wav', contentType: 'audio/wav', data: backing.subarray(2, 5) });
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    expect(new Uint8Array(await (form.get('file') as File).arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
  });
});
