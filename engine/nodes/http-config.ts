/**
 * The `http` node type's config schema, apart from the handler (which needs Node's Buffer), so
 * that code without Node (the designer in a browser page) checks an http config exactly as the
 * engine's validation does.
 *
 * Pure: imports zod only.
 */
import { z } from 'zod';

/** Whether `url` is an absolute http(s) URL, or holds a `{{ … }}` template (checked once rendered). */
function isHttpUrlOrTemplate(url: string): boolean {
  if (url.includes('{{')) return true;
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** HTTP methods the node sends. */
export const HttpMethodSchema = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);

/**
 * Config of `http`.
 *
 * - `method` (default GET); `url` (http: or https: only: a literal URL is checked when the
 *   workflow is validated, a templated one at run time, once rendered);
 * - `headers`: names are case-insensitive; values are sent as given, so a value outside Latin-1
 *   is refused naming the header (encode it in the template, e.g. `$encodeUrlComponent(x)`);
 *   `Idempotency-Key` is added unless given here ({@link encodeHeaderValue} of the key);
 * - `body`: a string is sent as is, anything else as JSON (with `content-type:
 *   application/json` unless given); not allowed with GET or HEAD;
 * - `query`: appended to the URL's search parameters;
 * - `expectedStatus`: statuses that complete the node (default: any 2xx);
 * - `timeoutMs`: per request, 1 ms … 1 day (default {@link DEFAULT_HTTP_TIMEOUT_MS});
 * - `responseType`: `json`, `text`, or `auto` (default: JSON when the content type says so).
 */
export const HttpConfigSchema = z
  .strictObject({
    method: HttpMethodSchema.default('GET').describe('HTTP method'),
    url: z
      .string()
      .min(1)
      .refine(isHttpUrlOrTemplate, {
        message: 'must be an absolute http: or https: URL (file:, ftp:, data: and relative URLs are refused)',
      })
      .describe('Request URL (http: or https:)'),
    headers: z.record(z.string(), z.string()).optional().describe('Request headers'),
    body: z.unknown().optional().describe('Request body: a string as is, anything else as JSON'),
    query: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('Query parameters appended to the URL'),
    expectedStatus: z
      .array(z.number().int().min(100).max(599))
      .min(1)
      .optional()
      .describe('Statuses that count as success (default: any 2xx)'),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(86_400_000)
      .optional()
      .describe('Request timeout in ms (default 300000: 5 minutes)'),
    responseType: z.enum(['json', 'text', 'auto']).default('auto').describe('How to read the response body'),
  })
  .refine((c) => c.body === undefined || (c.method !== 'GET' && c.method !== 'HEAD'), {
    message: 'a body is not allowed with GET or HEAD',
    path: ['body'],
  });

/** Config of `http` as written (defaults not applied). */
export type HttpConfigInput = z.input<typeof HttpConfigSchema>;

/** Parsed config of `http`. */
export type HttpConfig = z.output<typeof HttpConfigSchema>;
