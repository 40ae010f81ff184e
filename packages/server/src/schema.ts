// The ledger's tables as Kysely sees them: for an app that reads the ledger itself, or joins its
// own tables to it (`LedgerDatabase & MyTables` with `transactionOf`). A migration may add columns.
export type {
  ApprovalDecision,
  ApprovalsTable,
  ApproversTable,
  AsksTable,
  BudgetTotalsTable,
  BudgetUsesTable,
  CallsTable,
  ChainTable,
  EventsTable,
  LedgerDatabase,
  NoticesTable,
  PendingTable,
  SessionsTable,
  TimerKind,
  TimersTable,
  TurnCallsTable,
  TurnsTable,
} from './ledger/schema.ts';
