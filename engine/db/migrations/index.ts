/**
 * Numbered schema migrations, tracked by `PRAGMA user_version`.
 *
 * Each runs in its own transaction (Signal Desktop's pattern): the file is either at migration N
 * or N+1, never between. A shipped migration is never edited; a fix is a new number.
 */
import type Database from 'better-sqlite3';
import { EngineError } from '../../errors';
import { sql as m0001 } from './0001-initial';
import { sql as m0002 } from './0002-monitor-indexes';
import { sql as m0003 } from './0003-workflow-deleted';
import { sql as m0004 } from './0004-schedule-deadline';
import { sql as m0005 } from './0005-control-flow';
import { sql as m0006 } from './0006-concurrency';
import { sql as m0007 } from './0007-priority';
import { sql as m0008 } from './0008-retention';
import { sql as m0009 } from './0009-change-feed';
import { sql as m0010 } from './0010-history-autoincrement';
import { sql as m0011 } from './0011-history-state';
import { sql as m0012 } from './0012-workflow-schedules';
import { sql as m0013 } from './0013-test-runs';
import { sql as m0014 } from './0014-instance-id-floor';
import { sql as m0015 } from './0015-history-state-start';
import { sql as m0016 } from './0016-history-state-by-entry';
import { sql as m0017 } from './0017-instance-business-key';
import { sql as m0018 } from './0018-schedule-instant';
import { sql as m0019 } from './0019-schedule-instant-steps';

/** The migrations in order; index + 1 is the version each brings the file to. */
export const MIGRATIONS: readonly string[] = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010, m0011, m0012, m0013, m0014, m0015, m0016, m0017, m0018, m0019];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the file to {@link SCHEMA_VERSION}.
 *
 * @throws EngineError DATABASE_NEWER if the file was written by a newer Runnel.
 */
export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new EngineError(
      'DATABASE_NEWER',
      `${db.name} has schema version ${current}; this Runnel knows up to ${SCHEMA_VERSION}. Upgrade Runnel.`,
    );
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    const step = MIGRATIONS[v];
    if (step === undefined) break;
    db.transaction(() => {
      // Another process may have migrated between our read and this write lock.
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now > v) return;
      db.exec(step);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
