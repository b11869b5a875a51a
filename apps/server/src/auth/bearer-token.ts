import { UnauthorizedException } from '@nestjs/common';

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/** The 401 every bearer-authenticated route answers, with a machine-readable code. */
export function unauthorized(code: string, message: string): UnauthorizedException {
  return new UnauthorizedException({ statusCode: 401, error: 'Unauthorized', code, message });
}
