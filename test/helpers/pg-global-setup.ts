/**
 * Vitest globalSetup of the projects that use PostgreSQL (vitest.config.ts): one throwaway cluster
 * for the whole run (test/helpers/pg-cluster.ts), unless `RUNNEL_TEST_PG_URL` names a server to
 * use instead. The URL reaches the tests as `inject('pgUrl')` and as `RUNNEL_TEST_PG_URL` in the
 * environment (which the test processes inherit); test/helpers/postgres.ts reads it.
 *
 * Several projects of one run list this file: the first starts the cluster and sets
 * `RUNNEL_TEST_PG_URL` in this (the main) process, the others find it set and reuse it; the first
 * stops it at teardown, after every project's tests.
 */
import type { TestProject } from 'vitest/node';
import { startPgCluster } from './pg-cluster';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL whose user may create databases (the test cluster's superuser). */
    pgUrl: string;
    /** Whether this run started the server (false when RUNNEL_TEST_PG_URL named one). */
    pgClusterOwned: boolean;
  }
}

/** Starts (or reuses) the cluster and provides its URL; returns the teardown that stops what it started. */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.RUNNEL_TEST_PG_URL;
  if (given !== undefined && given !== '') {
    project.provide('pgUrl', given);
    project.provide('pgClusterOwned', process.env.RUNNEL_TEST_PG_OWNED === '1');
    return undefined;
  }
  const cluster = await startPgCluster();
  const onExit = () => cluster.stopSync();
  process.once('exit', onExit);
  process.env.RUNNEL_TEST_PG_URL = cluster.url;
  process.env.RUNNEL_TEST_PG_OWNED = '1';
  project.provide('pgUrl', cluster.url);
  project.provide('pgClusterOwned', true);
  return async () => {
    process.off('exit', onExit);
    delete process.env.RUNNEL_TEST_PG_URL;
    delete process.env.RUNNEL_TEST_PG_OWNED;
    await cluster.stop();
  };
}
