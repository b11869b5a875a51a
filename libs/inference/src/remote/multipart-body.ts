import { randomBytes } from 'node:crypto';

export interface MultipartFile {
  name: string;
  fileName: string;
  contentType: string;
  data: Uint8Array;
}

export interface MultipartBody {
  contentType: string;
  body: Buffer;
}

/**
 * multipart/form-data (RFC 7578) as one buffer: text fields, then one file. Built directly because
 * the other ways cost a turn more than the upload itself: FormData + Blob go through web streams
 * to become bytes, and undici's request API takes bytes. Field names are ours; values (a tenant's
 * prompt among them) may hold anything, so the boundary is random and checked against them.
 */
export function encodeMultipart(fields: Record<string, string>, file: MultipartFile): MultipartBody {
  const entries = Object.entries(fields);
  let boundary: string;
  do boundary = `----switchboard${randomBytes(12).toString('hex')}`;
  while (entries.some(([, value]) => value.includes(boundary)));
  const parts: Buffer[] = [];
  for (const [name, value] of entries) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`, 'utf8'));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(file.name)}"; filename="${quoted(file.fileName)}"\r\ncontent-type: ${file.contentType}\r\n\r\n`,
      'utf8',
    ),
    Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
    Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

/** The escaping the HTML standard uses for names in multipart headers: CR, LF and '"' percent-encoded. */
function quoted(name: string): string {
  return name.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}
