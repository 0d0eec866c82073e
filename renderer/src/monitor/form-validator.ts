/**
 * The JSON Schema validator the approval form (react-jsonschema-form) uses: zod's
 * `fromJSONSchema`, run without code generation.
 *
 * rjsf's own validator (@rjsf/validator-ajv8) compiles schemas with Ajv, which generates code with
 * `new Function`: the renderer's Content-Security-Policy has no 'unsafe-eval' (the browser host and
 * the desktop window alike), so it cannot run there. zod reads the same JSON Schema and checks it
 * jitless, as the designer's run dialog does (designer/run-variables.ts). A schema zod cannot read
 * is taken as allowing anything: the engine stays the judge of what it accepts.
 */
import {
  createErrorHandler,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from '@rjsf/utils';
import { z } from 'zod';

// No `new Function` probe under the page's CSP (see designer/validation.ts).
z.config({ jitless: true });

const compiled = new WeakMap<object, z.ZodType | null>();

/** `schema` as zod (with `root`'s definitions for its `$ref`s), or null when zod cannot read it. */
function zodOf(schema: RJSFSchema, root?: RJSFSchema): z.ZodType | null {
  const key = root !== undefined && root !== schema ? undefined : schema;
  const known = key === undefined ? undefined : compiled.get(key);
  if (known !== undefined) return known;
  const full: RJSFSchema = root !== undefined && root !== schema ? { ...schema, definitions: root.definitions, $defs: root.$defs as RJSFSchema['definitions'] } : schema;
  let out: z.ZodType | null;
  try {
    out = z.fromJSONSchema(full as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    out = null;
  }
  if (key !== undefined) compiled.set(key, out);
  return out;
}

/** `path` in rjsf's property notation: `.a.b`, `.list.0`, `['odd key']`. */
function property(path: readonly PropertyKey[]): string {
  return path.map((k) => (typeof k === 'number' ? `.${k}` : /^[A-Za-z_$][\w$]*$/.test(String(k)) ? `.${String(k)}` : `['${String(k)}']`)).join('');
}

/** Why `data` fails `schema`, one error per issue, in rjsf's shape (empty when it passes). */
export function formErrors(schema: RJSFSchema, data: unknown, root?: RJSFSchema): RJSFValidationError[] {
  const zod = zodOf(schema, root);
  if (zod === null) return [];
  const r = zod.safeParse(data);
  if (r.success) return [];
  return r.error.issues.map((issue) => {
    const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
    const message = missing ? 'is required' : issue.message.replace(/^Invalid input: /, '');
    const at = property(issue.path);
    return { name: missing ? 'required' : issue.code, message, property: at, stack: `${at === '' ? 'the data' : at.slice(1)} ${message}` };
  });
}

/** See the module comment. */
export const zodFormValidator: ValidatorType = {
  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator,
    transformErrors?: ErrorTransformer,
    uiSchema?: UiSchema,
  ): ValidationData<unknown> {
    let errors = formErrors(schema, formData);
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    const data: ValidationData<unknown> = { errors, errorSchema: toErrorSchema(errors) };
    if (!customValidate) return data;
    const handler = customValidate(formData, createErrorHandler(formData), uiSchema, data.errorSchema);
    return validationDataMerge(data, unwrapErrorHandler(handler));
  },
  isValid: (schema, formData, rootSchema) => formErrors(schema, formData, rootSchema).length === 0,
  rawValidation: <Result>(schema: RJSFSchema, formData?: unknown) => ({ errors: formErrors(schema, formData) as Result[] }),
};
