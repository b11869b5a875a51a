import { useMemo } from 'react';
import Form from '@rjsf/core';
import type { ErrorSchema } from '@rjsf/utils';
import validator from '@rjsf/validator-ajv8';
import { uiSchemaFor, type SchemaNode } from './form-schema';
import type { ErrorTree } from './problem-placement';
import { FORM_FIELDS, FORM_TEMPLATES } from './templates';

export interface SchemaFormProps {
  /** A JSON Schema of an object, as formSchemaFor shaped it. */
  schema: SchemaNode;
  value: Record<string, unknown>;
  onChange(value: Record<string, unknown>): void;
  /** Errors to show at their fields (the server's, placed by placeProblems). */
  errors: ErrorTree;
  /** Prefix of the inputs' ids, so two forms on a page do not collide. */
  idPrefix: string;
}

/**
 * A form generated from a JSON Schema (react-jsonschema-form): objects as fieldsets, strings,
 * numbers, booleans and enums as inputs, arrays with add/remove, unions with a variant select,
 * `description` as help text, defaults filled in. It renders fields only: the page's own <form>
 * submits. The server is the one validator (it also checks what a schema cannot say: URLs against
 * the outbound rule, secret references against the vault), so the form does not validate and
 * shows the server's problems where they belong.
 */
export function SchemaForm({ schema, value, onChange, errors, idPrefix }: SchemaFormProps) {
  const uiSchema = useMemo(() => uiSchemaFor(schema), [schema]);
  return (
    <Form
      tagName="div"
      className="schema-form"
      schema={schema}
      uiSchema={uiSchema}
      formData={value}
      onChange={(event) => onChange((event.formData ?? {}) as Record<string, unknown>)}
      validator={validator}
      noValidate
      noHtml5Validate
      showErrorList={false}
      extraErrors={errors as ErrorSchema}
      templates={FORM_TEMPLATES}
      fields={FORM_FIELDS}
      idPrefix={idPrefix}
    >
      {/* No submit button of its own: the surrounding form has one. */}
      <></>
    </Form>
  );
}
