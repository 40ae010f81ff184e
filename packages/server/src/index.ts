export type { Verification } from './ledger/chain.ts';
export { LedgerError, type LedgerErrorCode } from './ledger/error.ts';
export type { Ledger, LedgerEvent, LedgerOptions, NewLedgerEvent } from './ledger/ledger.ts';
export { postgresLedger, type PostgresLedgerClient, type PostgresLedgerOptions, type PostgresLedgerPool, type PostgresTypes } from './ledger/postgres.ts';
export type { ApprovalDecision, ApprovalsTable, CallsTable, ChainTable, EventsTable, LedgerDatabase } from './ledger/schema.ts';
export { sqliteLedger, type SqliteLedgerOptions } from './ledger/sqlite.ts';
