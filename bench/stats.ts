/**
 * Measuring helpers: latency histograms (HdrHistogram, microseconds), resource sampling (peak
 * RSS, peak WAL size) and the database footprint after a TRUNCATE checkpoint.
 */
import fs from 'node:fs';
import type Database from 'better-sqlite3';
import * as hdr from 'hdr-histogram-js';

/** A latency summary in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** A latency histogram fed in milliseconds, kept in microseconds (1 µs … 1 h, 3 digits). */
export class Latency {
  readonly h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });

  /** Records one latency of `ms` milliseconds (negative values, from clock rounding, count as 0). */
  record(ms: number): void {
    this.h.recordValue(Math.max(0, Math.round(ms * 1000)));
  }

  /** Adds the values of a histogram encoded by {@link encode} (another process's). */
  addEncoded(text: string): void {
    this.h.add(hdr.decodeFromCompressedBase64(text));
  }

  /** The histogram, compressed, for another process. */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.h);
  }

  summary(): LatencySummary {
    const h = this.h;
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: h.totalCount,
      p50: ms(h.getValueAtPercentile(50)),
      p99: ms(h.getValueAtPercentile(99)),
      max: ms(h.maxValue),
      mean: ms(h.mean),
    };
  }
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export const nowMs = (): number => performance.now();

/**
 * Samples this process's RSS and the WAL file's size every `intervalMs` until `stop()`, which
 * returns the peaks in bytes.
 */
export function sampleResources(
  walFile: string | undefined,
  intervalMs = 50,
): { stop(): { peakRssBytes: number; peakWalBytes: number } } {
  let peakRss = process.memoryUsage.rss();
  let peakWal = 0;
  const sample = () => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    if (walFile !== undefined) {
      try {
        peakWal = Math.max(peakWal, fs.statSync(walFile).size);
      } catch {
        // No WAL yet (or just truncated).
      }
    }
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peakRssBytes: peakRss, peakWalBytes: peakWal };
    },
  };
}

/** Database size after a TRUNCATE checkpoint: `page_count × page_size`, and the pages in use. */
export function footprint(db: Database.Database): { fileBytes: number; usedBytes: number } {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return { fileBytes: pages * pageSize, usedBytes: (pages - free) * pageSize };
}

/** The bytes of the pages a table (or index) holds, from SQLite's dbstat (https://sqlite.org/dbstat.html). */
export function tableBytes(db: Database.Database, name: string): number {
  return (db.prepare(`SELECT coalesce(sum(pgsize), 0) AS n FROM dbstat WHERE name = ?`).get(name) as { n: number }).n;
}

/** Removes a database file with its WAL and shared-memory files. */
export function removeDb(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
