import { discriminatorOf, isFreeForm, isNode, propertiesOf, variantsOf, type SchemaNode } from './form-schema';

/**
 * Puts the server's config problems (`problems: [{path, message}]` of a 400, paths like
 * `llm.temperature` or `tools.0.url`) at the fields the form renders. A path inside a field edited
 * as JSON (a tool's `parameters`) goes to that field, with the rest of the path in its message; a
 * path the form does not show (the root, a field another engine reads, an unknown key) is
 * returned as unplaced, for a summary above the form.
 */

export interface ConfigProblem {
  path: string;
  message: string;
}

/** rjsf's ErrorSchema: the same nesting as the data, with `__errors` at each field that has some. */
export interface ErrorTree {
  __errors?: string[];
  [key: string]: ErrorTree | string[] | undefined;
}

export interface PlacedProblems {
  errors: ErrorTree;
  unplaced: ConfigProblem[];
}

export function placeProblems(problems: ConfigProblem[], schema: SchemaNode, data: unknown): PlacedProblems {
  const errors: ErrorTree = {};
  const unplaced: ConfigProblem[] = [];
  for (const problem of problems) {
    const found = locate(schema, data, problem.path === '' ? [] : problem.path.split('.'));
    if (!found) {
      unplaced.push(problem);
      continue;
    }
    const message = found.rest.length > 0 ? `${found.rest.join('.')}: ${problem.message}` : problem.message;
    addError(errors, found.at, message);
  }
  return { errors, unplaced };
}

/** The deepest rendered field on `segments`, or undefined when the form does not show it. */
function locate(schema: SchemaNode, data: unknown, segments: string[]): { at: string[]; rest: string[] } | undefined {
  let node = schema;
  let value = data;
  const at: string[] = [];
  for (const [index, segment] of segments.entries()) {
    node = variantFor(node, value);
    const child = childOf(node, value, segment);
    if (!child) return at.length > 0 && isFreeForm(node) ? { at, rest: segments.slice(index) } : undefined;
    at.push(segment);
    node = child;
    value = valueAt(value, segment);
  }
  return at.length > 0 ? { at, rest: [] } : undefined;
}

function childOf(node: SchemaNode, value: unknown, segment: string): SchemaNode | undefined {
  const property = propertiesOf(node)[segment];
  if (property) return property;
  const items = node['items'];
  if (isNode(items) && /^\d+$/.test(segment) && Array.isArray(value) && Number(segment) < value.length) return items;
  return undefined;
}

/** The variant of a union that the form shows for `value`: the one its tag names. */
function variantFor(node: SchemaNode, value: unknown): SchemaNode {
  const tag = discriminatorOf(node);
  if (tag === undefined || !isNode(value)) return node;
  return variantsOf(node).find((variant) => propertiesOf(variant)[tag]?.['const'] === value[tag]) ?? node;
}

function valueAt(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) return value[Number(segment)];
  return isNode(value) ? value[segment] : undefined;
}

function addError(tree: ErrorTree, path: string[], message: string): void {
  let node = tree;
  for (const segment of path) {
    const next = node[segment];
    if (isNode(next)) {
      node = next;
    } else {
      const created: ErrorTree = {};
      node[segment] = created;
      node = created;
    }
  }
  node.__errors = [...(node.__errors ?? []), message];
}
