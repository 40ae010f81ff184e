import type { Migration } from 'kysely';
import { initial } from './migrations/0001-initial.ts';
import { turns } from './migrations/0002-turns.ts';
import { policy } from './migrations/0003-policy.ts';
import { pendingEvents } from './migrations/0004-pending-events.ts';
import { budgetTotals } from './migrations/0006-budget-totals.ts';
import { approvalAsks } from './migrations/0007-approval-asks.ts';
import { approvalTimers } from './migrations/0008-approval-timers.ts';
import { notices } from './migrations/0009-notices.ts';
import { lighterWrites } from './migrations/0010-lighter-writes.ts';
import { noticeKeys } from './migrations/0011-notice-keys.ts';

/**
 * Every migration, by name; applied in name order when a ledger opens, and recorded in
 * `toolgate_migrations`. Add new ones with the next number; never edit or rename a released one.
 *
 * @example
 * const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
 */
export const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-turns': turns,
  '0003-policy': policy,
  '0004-pending-events': pendingEvents,
  '0006-budget-totals': budgetTotals,
  '0007-approval-asks': approvalAsks,
  '0008-approval-timers': approvalTimers,
  '0009-notices': notices,
  '0010-lighter-writes': lighterWrites,
  '0011-notice-keys': noticeKeys,
};
