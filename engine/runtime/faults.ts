/**
 * Named fault points (after DBOS's debug points), armed only by tests.
 *
 * The worker calls `hit(point, info)` at fixed places; an armed point runs its action. In child
 * processes the points are armed from the `RUNNEL_FAULTS` environment variable, honoured only
 * when `RUNNEL_ENABLE_FAULTS=1` is set as well (so a stray variable never arms a real worker):
 * `point[@nodeId][#n]=action[,…]` where action is `kill` (SIGKILL this process), `exit` or
 * `throw`, and `#n` fires on the n-th hit only (default: every hit). Points:
 * - `claimed`: after a claim committed, before the handler starts (not hit for a claim whose
 *   attempts were used up by lost leases: it fails the node without running a handler);
 * - `handler-done`: after the handler returned, before its outcome commits;
 * - `committed`: after an outcome committed;
 * - `pruned`: after a retention batch of the worker committed deletes (`instanceId`: the lowest
 *   root deleted is not known here, so 0; `nodeId` null);
 * - `change-printed`: `runnel changes --consumer` printed a feed entry, before acknowledging it
 *   (`instanceId`/`nodeId` are the entry's; 0 for an entry of no instance);
 * - `change-acked`: it acknowledged that entry, before printing the next;
 * - `change-exported`: examples/changes-to-postgres.ts committed a batch to its target database,
 *   before acknowledging it (`instanceId`/`nodeId` are the batch's last entry's).
 */
export type FaultPoint = 'claimed' | 'handler-done' | 'committed' | 'pruned' | 'change-printed' | 'change-acked' | 'change-exported';

/** What a fault point sees. */
export interface FaultInfo {
  instanceId: number;
  nodeId: string | null;
  attempt?: number;
}

/** An armed fault: `action` runs when `point` is hit for `nodeId` (any node when omitted). */
export interface FaultRule {
  point: FaultPoint;
  nodeId?: string;
  /** Fire only on the n-th matching hit (1-based); every hit when omitted. */
  nth?: number;
  action: 'kill' | 'exit' | 'throw' | ((info: FaultInfo) => void);
}

/** A set of armed fault rules. */
export class Faults {
  private readonly counts = new Map<FaultRule, number>();
  constructor(private readonly rules: FaultRule[] = []) {}

  /** Parses `RUNNEL_FAULTS` (see module doc). An empty or missing value arms nothing. */
  static fromEnv(value: string | undefined): Faults {
    if (!value) return new Faults();
    const rules: FaultRule[] = [];
    for (const part of value.split(',')) {
      const m = /^(claimed|handler-done|committed|pruned|change-printed|change-acked|change-exported)(?:@([^#=]+))?(?:#(\d+))?=(kill|exit|throw)$/u.exec(part.trim());
      if (!m) throw new Error(`RUNNEL_FAULTS: cannot parse "${part}"`);
      const rule: FaultRule = { point: m[1] as FaultPoint, action: m[4] as 'kill' | 'exit' | 'throw' };
      if (m[2]) rule.nodeId = m[2];
      if (m[3]) rule.nth = Number(m[3]);
      rules.push(rule);
    }
    return new Faults(rules);
  }

  /** Whether any rule is armed (the worker skips the calls otherwise). */
  get armed(): boolean {
    return this.rules.length > 0;
  }

  /** Runs the actions of the rules matching this hit. */
  hit(point: FaultPoint, info: FaultInfo): void {
    for (const r of this.rules) {
      if (r.point !== point || (r.nodeId !== undefined && r.nodeId !== info.nodeId)) continue;
      const n = (this.counts.get(r) ?? 0) + 1;
      this.counts.set(r, n);
      if (r.nth !== undefined && r.nth !== n) continue;
      if (typeof r.action === 'function') r.action(info);
      else if (r.action === 'kill') process.kill(process.pid, 'SIGKILL');
      else if (r.action === 'exit') process.exit(70);
      else throw new Error(`fault injected at ${point}`);
    }
  }
}
