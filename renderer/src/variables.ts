/**
 * The Start panel's variables text, parsed.
 */

/**
 * Parses the variables textarea: empty means none; otherwise a JSON object.
 *
 * @returns the variables, or an error message naming what is wrong.
 */
export function parseVariables(text: string): { ok: true; value: Record<string, unknown> | undefined } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `Variables are not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'Variables must be a JSON object, e.g. {"deviceId": "d-1"}' };
  return { ok: true, value: value as Record<string, unknown> };
}
