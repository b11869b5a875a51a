import Ajv from 'ajv';
import addFormats from 'ajv-formats';

type OpenApiDocument = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };

/**
 * Checks real responses against the published OpenAPI document (the one served at
 * /docs/openapi.json), so the document cannot drift from what the server sends.
 */
export function openApiContract(document: unknown) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(toDraft7(document) as object, 'openapi');
  const doc = document as OpenApiDocument;

  return {
    /** Throws with the validation errors when `body` does not match the documented response. */
    assertResponse(method: string, pathTemplate: string, status: number, body: unknown): void {
      const operation = doc.paths[pathTemplate]?.[method.toLowerCase()];
      if (!operation) throw new Error(`${method} ${pathTemplate} is not in the OpenAPI document`);
      const response = operation.responses[String(status)];
      if (!response) throw new Error(`${method} ${pathTemplate} does not document status ${status}`);
      const schema = response.content?.['application/json']?.schema;
      if (!schema) {
        if (body !== undefined && body !== '') throw new Error(`${method} ${pathTemplate} ${status} documents no body but got one`);
        return;
      }
      const pointer = `openapi#/paths/${encodePointer(pathTemplate)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
      const validate = ajv.getSchema(pointer);
      if (!validate) throw new Error(`cannot compile ${pointer}`);
      if (!validate(body)) {
        throw new Error(`${method} ${pathTemplate} ${status} does not match the document:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(body).slice(0, 2000)}`);
      }
    },
  };
}

/**
 * OpenAPI 3.0 schemas are JSON Schema draft-04/07 with two differences Ajv needs spelled out:
 * boolean exclusiveMinimum/Maximum (draft-04) and `nullable` (Ajv knows this one natively).
 */
function toDraft7(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toDraft7);
  if (typeof node !== 'object' || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = toDraft7(value);
  for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof copy[exclusive] !== 'boolean') continue;
    if (copy[exclusive] === true) {
      copy[exclusive] = copy[bound];
      delete copy[bound];
    } else {
      delete copy[exclusive];
    }
  }
  return copy;
}

function encodePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1').replace(/\{/g, '%7B').replace(/\}/g, '%7D');
}
