import type { Pipeline } from '@toolgate/core/kit';
import type { LedgerKeeper } from '../keeper/ledger-keeper.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { ApprovalStep } from '../policy/approval.ts';
import type { Follower } from './follower.ts';
import type { ServerGateOptions } from './server-gate.ts';
import type { Sessions } from './sessions.ts';
import type { GateSettings } from './settings.ts';
import type { ToolSet } from './tool-set.ts';
import type { Waiters } from './waiters.ts';
import type { Channel } from '../notices/notice.ts';
import type { FreshNotices, NoticeSettling } from '../notices/settling.ts';

/**
 * The parts a server gate is built from, handed to each of its steps (proposing, deciding,
 * recovering). Each step names the parts it works with (`Pick<GateParts, 'ledger' | 'keeper'>`)
 * instead of sharing one closure's variables, so what a step may touch is in its signature.
 *
 * @example
 * const decision = await approve(parts, 'call_1', { principal: 'user_42', inputHash });
 */
export interface GateParts {
  readonly options: ServerGateOptions;
  readonly settings: GateSettings;
  /** Where notices to the people a call asks go (`createServerGate({ channels })`). */
  readonly channels: readonly Channel[];
  /** Deliveries of notices taken by a channel, until the ledger records them. */
  readonly settling: NoticeSettling;
  /** Notices this process wrote, to deliver once they commit. */
  readonly freshNotices: FreshNotices;
  readonly ledger: Ledger;
  readonly tools: ToolSet;
  readonly keeper: LedgerKeeper;
  readonly pipeline: Pipeline;
  readonly waiters: Waiters;
  readonly follower: Follower;
  readonly sessions: Sessions;
  /** What approving works with: the budgets, and how many approvers each tool needs. */
  readonly policy: ApprovalStep;
  /** Set once `close()` was called: nothing new is taken over or run. */
  readonly life: { closed: boolean };
}
