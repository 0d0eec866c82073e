/**
 * Generates `orders.csv`, the data file of the csv-pipeline example.
 *
 * Run once with `npx tsx examples/data/generate-orders.ts`; the CSV is committed, so the example
 * never depends on this script. The output is deterministic (a seeded mulberry32), so a rerun
 * produces the same bytes. About 1.5 % of the rows are dirty on purpose, for the `clean` step:
 * empty or malformed e-mails, zero / negative / non-numeric quantities, bad prices, and repeated
 * order ids. Cosmetic dirt (lower-case country codes, stray spaces, a decimal comma) is kept by
 * `clean` after normalizing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Rows written (the header not included). */
export const ORDER_ROWS = 3600;

/** mulberry32: a tiny seeded PRNG, good enough for test data. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Frances',
  'Edsger',
  'Radia',
  'Guido',
  'Sophie',
  'Tim',
  'Hedy',
  'José',
  'Zoë',
  'Björn',
  'Aiko',
  'Chen',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Dijkstra',
  'Perlman',
  'van Rossum',
  'Wilson',
  'Berners-Lee',
  'Lamarr',
  'Müller',
  "O'Neil",
  'Søndergaard',
  'Tanaka',
  'Wang',
];
const COUNTRIES = ['DE', 'FR', 'NL', 'SE', 'US', 'GB', 'JP', 'ES', 'IT', 'PL'];
const PRODUCTS: Array<[string, string, number]> = [
  ['SKU-1001', 'Firmware licence', 49.0],
  ['SKU-1002', 'Sensor node v2', 89.5],
  ['SKU-1003', 'Gateway, outdoor', 349.0],
  ['SKU-1004', 'Cable, USB-C 2m', 12.9],
  ['SKU-1005', 'Battery pack "XL"', 59.99],
  ['SKU-1006', 'Mounting kit', 19.0],
  ['SKU-1007', 'Support plan (1 year)', 199.0],
  ['SKU-1008', 'Antenna 868 MHz', 24.5],
];

function csvField(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The CSV text: a header line and {@link ORDER_ROWS} rows, `\n`-terminated. */
export function generateOrdersCsv(seed = 20240601): string {
  const rand = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const lines = ['order_id,order_date,customer,email,country,sku,product,quantity,unit_price'];
  const start = Date.UTC(2024, 0, 1);
  const rows: string[][] = [];
  for (let i = 1; i <= ORDER_ROWS; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const [sku, product, price] = pick(PRODUCTS);
    let email =
      `${first}.${last}`
        .toLowerCase()
        .normalize('NFD')
        .replace(/[^a-z.]/g, '') + '@example.com';
    let country = pick(COUNTRIES);
    let quantity = String(1 + Math.floor(rand() * 9));
    let unitPrice = price.toFixed(2);
    let id = `ORD-${String(100000 + i)}`;
    const dirt = rand();
    if (dirt < 0.004) email = '';
    else if (dirt < 0.007) email = email.replace('@', ' at ');
    else if (dirt < 0.01) quantity = pick(['0', '-2', 'three']);
    else if (dirt < 0.012) unitPrice = 'n/a';
    else if (dirt < 0.015 && rows.length > 0)
      id = (rows[Math.floor(rand() * rows.length)] as string[])[0] as string;
    else if (dirt < 0.05) country = ` ${country.toLowerCase()} `;
    else if (dirt < 0.07) unitPrice = unitPrice.replace('.', ',');
    const date = new Date(start + Math.floor(rand() * 366) * 86_400_000).toISOString().slice(0, 10);
    const row = [id, date, `${first} ${last}`, email, country, sku, product, quantity, unitPrice];
    rows.push(row);
    lines.push(row.map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'orders.csv');
  fs.writeFileSync(out, generateOrdersCsv());
  console.log(`wrote ${out}`);
}
