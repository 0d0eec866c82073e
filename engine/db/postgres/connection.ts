/**
 * PostgreSQL: the connection settings of the engine's thread (the read pool, the LISTEN
 * connection). The bridge's thread sets the same parsing for itself (./bridge-thread.ts).
 */
import pg from 'pg';

/** Epoch ms and ids (BIGINT, below 2^53) as numbers, not strings; every other type as `pg` parses it. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The `pg` client config of `url` on the engine's thread: BIGINT as numbers, `application_name` runnel. */
export function clientConfig(url: string): pg.ClientConfig {
  return { connectionString: url, types: TYPES, application_name: 'runnel' };
}
