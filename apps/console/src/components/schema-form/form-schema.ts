/**
 * Shapes the agent config's JSON Schema (GET /v1/agents/config-schema, made on the server from the
 * zod schema that validates a save) into what the form renders: only the fields the chosen engine
 * reads (`x-engines`), with readable titles, union variants named by their discriminator, and a
 * uiSchema derived from the schema itself (long strings as text areas, fixed values hidden,
 * free-form objects as JSON). Nothing here knows the agent config's fields by name.
 */

/** A JSON Schema node, read loosely: the server's document is data, not a type. */
export type SchemaNode = { [keyword: string]: unknown };
/** rjsf's uiSchema: per property, `ui:*` options. */
export type UiNode = { [key: string]: unknown };

export function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function propertiesOf(node: SchemaNode): Record<string, SchemaNode> {
  return isNode(node['properties']) ? (node['properties'] as Record<string, SchemaNode>) : {};
}

export function variantsOf(node: SchemaNode): SchemaNode[] {
  const variants = node['oneOf'] ?? node['anyOf'];
  return Array.isArray(variants) ? variants.filter(isNode) : [];
}

/** The property every variant of a union fixes with `const` (a discriminated union's tag), if any. */
export function discriminatorOf(node: SchemaNode): string | undefined {
  const variants = variantsOf(node);
  if (variants.length < 2) return undefined;
  const candidates = Object.keys(propertiesOf(variants[0] as SchemaNode));
  return candidates.find((key) => variants.every((variant) => propertiesOf(variant)[key]?.['const'] !== undefined));
}

/** Marks a free-form object in the shaped schema, where its `type` is gone (see shape). */
const FREE_FORM = 'x-free-form';

/** An object whose keys are free (a JSON Schema of its own, say): edited as JSON text. */
export function isFreeForm(node: SchemaNode): boolean {
  if (node[FREE_FORM] === true) return true;
  return node['type'] === 'object' && Object.keys(propertiesOf(node)).length === 0 && node['additionalProperties'] !== false;
}

/** The top-level fields that the engine reads: those whose `x-engines` lists it (or that say nothing). */
export function fieldsForEngine(schema: SchemaNode, engine: string): string[] {
  return Object.entries(propertiesOf(schema))
    .filter(([, field]) => !Array.isArray(field['x-engines']) || (field['x-engines'] as unknown[]).includes(engine))
    .map(([key]) => key);
}

/** The schema the form renders for one engine. */
export function formSchemaFor(schema: SchemaNode, engine: string): SchemaNode {
  const shown = new Set(fieldsForEngine(schema, engine));
  const properties = Object.fromEntries(Object.entries(propertiesOf(schema)).filter(([key]) => shown.has(key)));
  const { $schema: _dialect, ...rest } = schema;
  return shape({ ...rest, properties });
}

function shape(node: SchemaNode, key?: string): SchemaNode {
  let out: SchemaNode = { ...node };
  // `T | null` (zod's nullable) is one input that may be left empty: render it as T.
  const variants = variantsOf(out);
  const nonNull = variants.filter((variant) => variant['type'] !== 'null');
  if (variants.length === 2 && nonNull.length === 1) {
    const { anyOf: _anyOf, oneOf: _oneOf, ...withoutUnion } = out;
    out = { ...withoutUnion, ...(nonNull[0] as SchemaNode) };
  }
  if (key !== undefined && out['title'] === undefined) out['title'] = humanize(key);
  // A free-form object (a tool's `parameters`) is the JSON field's alone: without a `type`, the form
  // library neither fills it with `{}` nor with its default (whose empty objects it would drop), so
  // left empty it is left out and the server's default applies; the field shows that default.
  if (isFreeForm(out)) {
    const kept = { title: out['title'], description: out['description'], examples: out['default'] === undefined ? undefined : [out['default']], [FREE_FORM]: true };
    return Object.fromEntries(Object.entries(kept).filter(([, value]) => value !== undefined));
  }
  const properties = propertiesOf(out);
  if (Object.keys(properties).length > 0) {
    out['properties'] = Object.fromEntries(
      Object.entries(properties)
        // `{ not: {} }` accepts nothing: a removed field, kept only to explain itself to old configs.
        .filter(([, child]) => !(isNode(child['not']) && Object.keys(child['not']).length === 0))
        .map(([childKey, child]) => [childKey, shape(child, childKey)]),
    );
  }
  if (isNode(out['items'])) out['items'] = shape(out['items']);
  const union = out['oneOf'] !== undefined ? 'oneOf' : out['anyOf'] !== undefined ? 'anyOf' : undefined;
  if (union) {
    const tag = discriminatorOf(out);
    out[union] = variantsOf(out).map((variant) => {
      const shaped = shape(variant);
      const constant = tag === undefined ? undefined : propertiesOf(variant)[tag]?.['const'];
      return typeof constant === 'string' && variant['title'] === undefined ? { ...shaped, title: humanize(constant) } : shaped;
    });
    if (tag !== undefined) out['discriminator'] = { propertyName: tag };
  }
  return out;
}

/** The uiSchema the form needs, read off the schema: nothing here names a config field. */
export function uiSchemaFor(node: SchemaNode): UiNode {
  if (node['const'] !== undefined) return { 'ui:widget': 'hidden' };
  if (isFreeForm(node)) return { 'ui:field': 'json' };
  const ui: UiNode = {};
  if (node['type'] === 'string' && typeof node['maxLength'] === 'number' && node['maxLength'] > 200) ui['ui:widget'] = 'textarea';
  for (const [key, child] of Object.entries(propertiesOf(node))) {
    const childUi = uiSchemaFor(child);
    if (Object.keys(childUi).length > 0) ui[key] = childUi;
  }
  if (isNode(node['items'])) ui['items'] = uiSchemaFor(node['items']);
  const variants = variantsOf(node);
  if (variants.length > 0) ui[node['oneOf'] !== undefined ? 'oneOf' : 'anyOf'] = variants.map(uiSchemaFor);
  // A discriminated union's select chooses its tag: label it so ("Type"), not "Tools-1".
  const tag = discriminatorOf(node);
  if (tag !== undefined) ui['ui:title'] = humanize(tag);
  return ui;
}

const WORDS: Record<string, string> = { url: 'URL', api: 'API', stt: 'STT', llm: 'LLM', tts: 'TTS', id: 'ID' };
const UNITS: Record<string, string> = { ms: '(ms)', s: '(s)' };

/** `minSilenceMs` -> "Min silence (ms)", `apiKeySecret` -> "API key secret", `end_call` -> "End call". */
export function humanize(key: string): string {
  const words = key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .trim()
    .split(/\s+/)
    .map((word) => word.toLowerCase());
  const last = words[words.length - 1];
  if (words.length > 1 && last !== undefined && UNITS[last]) words[words.length - 1] = UNITS[last];
  const text = words.map((word) => WORDS[word] ?? word).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
