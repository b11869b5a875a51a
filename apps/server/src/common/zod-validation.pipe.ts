import { BadRequestException, PipeTransform } from '@nestjs/common';
import type { z } from 'zod';

/**
 * Validates a request part against a zod schema; a failure is a 400 whose body names each field
 * and the rule it broke, so API clients can show it without parsing prose.
 */
export class ZodValidationPipe<T extends z.ZodType> implements PipeTransform<unknown, z.infer<T>> {
  constructor(private readonly schema: T) {}

  transform(value: unknown): z.infer<T> {
    const result = this.schema.safeParse(value);
    if (result.success) return result.data;
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code: 'validation_failed',
      message: 'The request is invalid.',
      details: result.error.issues.map((issue) => ({
        field: issue.path.join('.'),
        rule: issue.code,
        message: issue.message,
      })),
    });
  }
}
