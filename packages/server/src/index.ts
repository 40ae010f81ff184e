export { inputHash } from '@toolgate/core';
export { decisionStatus, type Decision, type DecisionCode, type RefusalCode } from './decision/decision.ts';
export type { LedgerMove } from './ledger/ledger.ts';
export { toolgateHandler, type HandlerErrorCode, type ToolgateHandlerOptions } from './http/handler.ts';
export type { Verification, VerifyOptions, VerifyProgress } from './ledger/chain/chain.ts';
export { LedgerError, type LedgerErrorCode } from './ledger/error.ts';
export type {
  Committed,
  EventReason,
  HeldTransaction,
  Ledger,
  LedgerEvent,
  LedgerOptions,
  NewLedgerEvent,
  OwnCommit,
  WaitNote,
} from './ledger/ledger.ts';
export {
  postgresLedger,
  type PostgresLedgerClient,
  type PostgresLedgerOptions,
  type PostgresLedgerPool,
  type PostgresTypes,
} from './ledger/postgres.ts';
export { sqliteLedger, type SqliteLedgerOptions } from './ledger/sqlite.ts';
export type {
  CallInfo,
  Recovery,
  ServerGate,
  ServerGateOptions,
  ServerProposeOptions,
  SessionInfo,
  TurnGate,
  TurnOptions,
} from './gate/server-gate.ts';
export { createServerGate } from './gate/create-server-gate.ts';
export { noticeId, type Channel, type Notice, type NoticeKind } from './notices/notice.ts';
export { transactionOf } from './gate/transaction.ts';
export type { Budget, BudgetCall } from './policy/budget.ts';
export type { EndedTurn, TurnSettledHandler } from './turns/ended-turn.ts';
export {
  approvalLinks,
  type ApprovalLinks,
  type ApprovalLinksOptions,
  type LinkCheck,
  type LinkClaims,
} from './links/approval-links.ts';
export type { ChannelReason, ChannelRefusalCode, VoteRefusal, VoteVia } from './decision/channel-reason.ts';
