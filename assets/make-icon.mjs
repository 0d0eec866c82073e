// Draws the app icon (assets/icon.png, 512×512 RGBA) from the same shapes as assets/icon.svg:
// a rounded square with a blue-to-indigo gradient and a white four-node DAG (a diamond: one
// step forks into two, which join again). Pure Node (zlib only), 4×4 supersampled.
// Run: node assets/make-icon.mjs
import fs from 'node:fs';
import zlib from 'node:zlib';
import { Buffer } from 'node:buffer';

const SIZE = 512;
const SS = 4;
const nodes = [
  [136, 256],
  [256, 152],
  [256, 360],
  [376, 256],
];
const edges = [
  [0, 1],
  [0, 2],
  [1, 3],
  [2, 3],
];
const NODE_R = 42;
const EDGE_W = 22;

function insideRoundedRect(x, y) {
  const [x0, y0, x1, y1, r] = [32, 32, 480, 480, 104];
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return x >= x0 && x <= x1 && y >= y0 && y <= y1 && (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

function distToSegment(px, py, [ax, ay], [bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

function sample(x, y) {
  if (!insideRoundedRect(x, y)) return [0, 0, 0, 0];
  const onNode = nodes.some(([nx, ny]) => Math.hypot(x - nx, y - ny) <= NODE_R);
  const onEdge = edges.some(([a, b]) => distToSegment(x, y, nodes[a], nodes[b]) <= EDGE_W / 2);
  if (onNode || onEdge) return [255, 255, 255, 255];
  // #0ea5e9 (top left) → #4f46e5 (bottom right)
  const t = Math.max(0, Math.min(1, (x + y - 64) / 896));
  return [Math.round(0x0e + (0x4f - 0x0e) * t), Math.round(0xa5 + (0x46 - 0xa5) * t), Math.round(0xe9 + (0xe5 - 0xe9) * t), 255];
}

const raw = Buffer.alloc((SIZE * 4 + 1) * SIZE);
for (let y = 0; y < SIZE; y++) {
  raw[y * (SIZE * 4 + 1)] = 0; // filter: none
  for (let x = 0; x < SIZE; x++) {
    const acc = [0, 0, 0, 0];
    for (let sy = 0; sy < SS; sy++) {
      for (let sx = 0; sx < SS; sx++) {
        const [r, g, b, a] = sample(x + (sx + 0.5) / SS, y + (sy + 0.5) / SS);
        acc[0] += r * a;
        acc[1] += g * a;
        acc[2] += b * a;
        acc[3] += a;
      }
    }
    const o = y * (SIZE * 4 + 1) + 1 + x * 4;
    const alpha = acc[3] / (SS * SS);
    raw[o] = acc[3] ? Math.round(acc[0] / acc[3]) : 0;
    raw[o + 1] = acc[3] ? Math.round(acc[1] / acc[3]) : 0;
    raw[o + 2] = acc[3] ? Math.round(acc[2] / acc[3]) : 0;
    raw[o + 3] = Math.round(alpha);
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr[8] = 8; // bit depth
ihdr[9] = 6; // RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
const out = new URL('./icon.png', import.meta.url);
fs.writeFileSync(out, png);
console.log(`wrote ${out.pathname} (${png.length} bytes)`);
