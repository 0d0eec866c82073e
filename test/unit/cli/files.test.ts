/**
 * engine/cli/files.ts `invalidUtf8Offset`: the first byte that does not start a well-formed UTF-8
 * sequence (Unicode Table 3-7), agreeing with Node's own check on what is valid.
 */
import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { invalidUtf8Offset } from '../../../engine/cli/files';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('invalidUtf8Offset', () => {
  it('is -1 for well-formed text of every length of sequence', () => {
    const text = Buffer.from('a é € 𝄞 设备 🚀 \u{10ffff}', 'utf8');
    expect(invalidUtf8Offset(text)).toBe(-1);
    expect(invalidUtf8Offset(bytes())).toBe(-1);
  });

  it.each([
    ['a latin-1 é', [0x63, 0x61, 0x66, 0xe9], 3],
    ['a lone continuation byte', [0x41, 0x80], 1],
    ['an overlong 2-byte form', [0xc0, 0x80], 0],
    ['C1 (overlong lead)', [0x41, 0xc1, 0xbf], 1],
    ['an overlong 3-byte form', [0xe0, 0x80, 0x80], 0],
    ['a UTF-16 surrogate', [0x41, 0x42, 0xed, 0xa0, 0x80], 2],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['an overlong 4-byte form', [0xf0, 0x80, 0x80, 0x80], 0],
    ['F5 and above', [0xf5, 0x80, 0x80, 0x80], 0],
    ['a sequence cut at the end', [0x41, 0xe2, 0x82], 1],
    ['a sequence cut by ASCII', [0xe2, 0x41, 0x41], 0],
    ['a UTF-16LE byte-order mark', [0xff, 0xfe, 0x41, 0x00], 0],
  ])('%s: at the byte it starts', (_what, input, offset) => {
    const b = bytes(...input);
    expect(isUtf8(b)).toBe(false);
    expect(invalidUtf8Offset(b)).toBe(offset);
  });
});
