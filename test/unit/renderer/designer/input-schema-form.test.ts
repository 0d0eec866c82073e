// The input-variable list over a workflow's inputSchema (renderer/src/designer/input-schema-form.ts):
// a string's minLength and pattern read and written, every other keyword kept.
import { describe, expect, it } from 'vitest';
import { readFields, writeFields } from '../../../../renderer/src/designer/input-schema-form';

describe('input schema form', () => {
  it('reads a string field\'s minLength and pattern', () => {
    const schema = { type: 'object', properties: { code: { type: 'string', minLength: 3, pattern: '^A', maxLength: 9 } }, required: ['code'] };
    expect(readFields(schema)).toEqual([{ name: 'code', type: 'string', required: true, minLength: 3, pattern: '^A' }]);
  });

  it('writes them on string fields, removes them when cleared, and keeps other keywords', () => {
    const schema = { type: 'object', properties: { code: { type: 'string', maxLength: 9, pattern: '^A' } } };
    expect(writeFields(schema, [{ name: 'code', type: 'string', required: false, minLength: 2, pattern: undefined }])).toEqual({
      type: 'object',
      properties: { code: { type: 'string', maxLength: 9, minLength: 2 } },
    });
    // a field that does not name them keeps them (a rename carries them along)
    expect(writeFields(schema, [{ name: 'code', type: 'string', required: false }])).toEqual(schema);
    // another type leaves what the field had
    expect(writeFields(schema, [{ name: 'code', type: 'number', required: true }])).toEqual({
      type: 'object',
      properties: { code: { type: 'number', maxLength: 9, pattern: '^A' } },
      required: ['code'],
    });
  });
});
