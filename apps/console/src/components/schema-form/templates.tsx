import { useEffect, useRef, useState } from 'react';
import type {
  ArrayFieldItemTemplateProps,
  DescriptionFieldProps,
  ErrorSchema,
  FieldErrorProps,
  FieldProps,
  FieldTemplateProps,
  IconButtonProps,
  MultiSchemaFieldTemplateProps,
  ObjectFieldTemplateProps,
  RegistryFieldsType,
  TemplatesType,
} from '@rjsf/utils';

/*
 * How the generated form looks: the console's own markup and classes in place of rjsf's default
 * (Bootstrap 3) theme, every field wrapped with `data-path` (its path in the config, as the
 * server's problems name it), and errors in the same `.field-errors` list as the console's other
 * forms.
 */

/** One field: label, help text, the input, its errors. */
function FieldTemplate({ id, label, children, errors, description, hidden, required, displayLabel, fieldPathId, classNames, rawErrors }: FieldTemplateProps) {
  if (hidden) return <div hidden>{children}</div>;
  const path = fieldPathId.path.join('.');
  const invalid = (rawErrors?.length ?? 0) > 0;
  return (
    <div className={`schema-field ${classNames ?? ''}${invalid ? ' invalid' : ''}`} data-path={path}>
      {displayLabel && (
        <label htmlFor={id} title={path}>
          {label}
          {required ? ' *' : ''}
        </label>
      )}
      {displayLabel && description}
      {children}
      {errors}
    </div>
  );
}

function FieldErrorTemplate({ errors = [], fieldPathId }: FieldErrorProps) {
  const shown = errors.filter((error) => Boolean(error));
  if (shown.length === 0) return null;
  return (
    <ul className="field-errors" role="alert" id={`${fieldPathId.$id}__error`}>
      {shown.map((error, index) => (
        <li key={index}>{error}</li>
      ))}
    </ul>
  );
}

function DescriptionFieldTemplate({ id, description }: DescriptionFieldProps) {
  if (!description) return null;
  return (
    <p id={id} className="hint field-help">
      {description}
    </p>
  );
}

/**
 * An object: the root's fields as they are; an array item (a tool) as a fieldset under its list;
 * a section (stt, llm, turn, ...) folded until opened, and opened by an error inside it.
 */
function ObjectFieldTemplate({ title, description, properties, fieldPathId, errorSchema, className }: ObjectFieldTemplateProps) {
  const hasErrors = containsErrors(errorSchema);
  const [open, setOpen] = useState(hasErrors);
  useEffect(() => {
    if (hasErrors) setOpen(true);
  }, [hasErrors]);
  const content = properties.map((property) => property.content);
  const path = fieldPathId.path;
  if (path.length === 0) return <div className="schema-root">{content}</div>;
  const body = (
    <>
      {description && <p className="hint field-help">{description}</p>}
      {content}
    </>
  );
  if (/^\d+$/.test(String(path[path.length - 1]))) {
    return (
      <fieldset className={className} id={fieldPathId.$id}>
        {body}
      </fieldset>
    );
  }
  return (
    <details className="schema-section" id={fieldPathId.$id} open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>{title}</summary>
      {body}
    </details>
  );
}

function containsErrors(tree: ErrorSchema | undefined): boolean {
  if (!tree) return false;
  return Object.entries(tree).some(([key, value]) => (key === '__errors' ? Array.isArray(value) && value.length > 0 : typeof value === 'object' && value !== null && containsErrors(value)));
}

/** A union (a tool's kind, say): the variant select, then the chosen variant's fields. */
function MultiSchemaFieldTemplate({ selector, optionSchemaField }: MultiSchemaFieldTemplateProps) {
  return (
    <div className="schema-variant">
      {selector}
      {optionSchemaField}
    </div>
  );
}

/** One array item, with its remove/move buttons beside it. */
function ArrayFieldItemTemplate({ children, buttonsProps, hasToolbar, registry, index }: ArrayFieldItemTemplateProps) {
  const Buttons = registry.templates.ArrayFieldItemButtonsTemplate;
  return (
    <div className="schema-array-item" data-item-path={buttonsProps.fieldPathId.path.join('.')} data-index={index}>
      <div className="schema-array-item-body">{children}</div>
      {hasToolbar && (
        <div className="schema-array-item-buttons">
          <Buttons {...buttonsProps} />
        </div>
      )}
    </div>
  );
}

/** rjsf's buttons are Bootstrap glyph icons; these say what they do. */
function textButton(text: string) {
  return function TextButton({ registry: _registry, uiSchema: _uiSchema, iconType: _iconType, icon: _icon, className: _className, style: _style, ...button }: IconButtonProps) {
    return (
      <button type="button" className="link small" {...button}>
        {text}
      </button>
    );
  };
}

export const FORM_TEMPLATES: Partial<Omit<TemplatesType, 'ButtonTemplates'>> & { ButtonTemplates: Partial<TemplatesType['ButtonTemplates']> } = {
  FieldTemplate,
  ObjectFieldTemplate,
  FieldErrorTemplate,
  DescriptionFieldTemplate,
  MultiSchemaFieldTemplate,
  ArrayFieldItemTemplate,
  ButtonTemplates: {
    AddButton: textButton('Add'),
    RemoveButton: textButton('Remove'),
    MoveUpButton: textButton('Move up'),
    MoveDownButton: textButton('Move down'),
    CopyButton: textButton('Copy'),
    ClearButton: textButton('Clear'),
  },
};

/**
 * A free-form object (a tool's JSON Schema `parameters`) edited as JSON text: a value is passed on
 * once it parses, and until then the field says why it does not.
 */
function JsonField({ formData, onChange, fieldPathId, schema, disabled, readonly, name }: FieldProps) {
  const show = (value: unknown) => (value === undefined ? '' : JSON.stringify(value, null, 2));
  const [text, setText] = useState(() => show(formData));
  const [parseError, setParseError] = useState<string>();
  const sent = useRef(show(formData));
  // Data changed elsewhere (the JSON view, a reset): show it, unless it is what this field sent.
  useEffect(() => {
    const incoming = show(formData);
    if (incoming !== sent.current) {
      sent.current = incoming;
      setText(incoming);
      setParseError(undefined);
    }
  }, [formData]);
  const edit = (next: string) => {
    setText(next);
    try {
      // Empty: the field is left out, and the server's default applies.
      const parsed: unknown = next.trim() === '' ? undefined : JSON.parse(next);
      setParseError(undefined);
      sent.current = show(parsed);
      onChange(parsed, fieldPathId.path);
    } catch (caught) {
      setParseError(`Not valid JSON yet: ${caught instanceof Error ? caught.message : String(caught)}`);
    }
  };
  const title = typeof schema.title === 'string' ? schema.title : name;
  const example = Array.isArray(schema.examples) && schema.examples.length > 0 ? JSON.stringify(schema.examples[0]) : undefined;
  return (
    <>
      <label htmlFor={fieldPathId.$id} title={fieldPathId.path.join('.')}>
        {title} (JSON)
      </label>
      {typeof schema.description === 'string' && <p className="hint field-help">{schema.description}</p>}
      <textarea id={fieldPathId.$id} rows={6} spellCheck={false} value={text} placeholder={example && `Empty: ${example}`} disabled={disabled || readonly} onChange={(event) => edit(event.target.value)} />
      {parseError && (
        <ul className="field-errors" role="alert">
          <li>{parseError}</li>
        </ul>
      )}
    </>
  );
}

export const FORM_FIELDS: RegistryFieldsType = { json: JsonField };
