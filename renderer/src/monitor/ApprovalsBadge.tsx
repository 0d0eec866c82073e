/** The number of approvals waiting, on the Approvals tab (`approvals-badge`); nothing when none. */
import { useApprovals } from './hooks';

/** See the module comment. */
export function ApprovalsBadge() {
  const total = useApprovals((s) => s.total);
  if (total === 0) return null;
  return (
    <span className="nav-badge" data-testid="approvals-badge" data-count={total}>
      {total > 999 ? '999+' : total}
    </span>
  );
}
