import { randomUUID } from 'node:crypto';
import { resolveLimits, systemClock } from '@toolgate/core/kit';
import { type Clock, type Limits } from '@toolgate/core';
import { storable } from '../ledger/guards/storable.ts';
import type { CallInfo, ServerGateOptions, ServerProposeOptions, SessionInfo } from './server-gate.ts';

/**
 * The server gate's options with every default filled in and every number checked.
 *
 * @example
 * const settings = gateSettings({ tools, ledger, leaseMs: 10_000 });
 * settings.leaseMs; // 10000
 */
export interface GateSettings {
  readonly clock: Clock;
  readonly onError: (error: unknown) => void;
  readonly limits: Limits;
  readonly leaseMs: number;
  readonly endingRetryMs: number;
  readonly approvalTtlMs: number;
  readonly instance: string;
  readonly generateId: () => string;
  readonly canSee: (principal: string, session: SessionInfo) => boolean | Promise<boolean>;
  readonly canApprove: (principal: string, call: CallInfo) => boolean | Promise<boolean>;
  /** Whether an app gave `canApprove`: on a tool with `approvers` only a given one applies too. */
  readonly canApproveGiven: boolean;
  readonly selfApproval: 'forbid' | 'allow';
}

const DAY = 24 * 60 * 60 * 1000;

/**
 * Fills in the defaults; throws a `TypeError` naming the option that is not a positive duration.
 *
 * @example
 * const { clock, leaseMs } = gateSettings(options);
 */
export function gateSettings(options: ServerGateOptions): GateSettings {
  return {
    clock: options.clock ?? systemClock,
    onError: options.onError ?? ((error: unknown) => console.error(error)),
    limits: resolveLimits(options.limits),
    leaseMs: positive('leaseMs', options.leaseMs ?? 30_000),
    endingRetryMs: positive('endingRetryMs', options.endingRetryMs ?? options.leaseMs ?? 30_000),
    approvalTtlMs: positive('approvalTtlMs', options.approvalTtlMs ?? DAY),
    instance: options.instance ?? `toolgate:${randomUUID()}`,
    generateId: options.generateId ?? (() => randomUUID()),
    canSee: options.canSee ?? ((principal, session) => principal === session.owner),
    canApprove: options.canApprove ?? ((principal, call) => principal === call.owner),
    canApproveGiven: options.canApprove !== undefined,
    selfApproval: selfApproval(options.selfApproval),
  };
}

function selfApproval(value: unknown): 'forbid' | 'allow' {
  if (value === undefined || value === 'forbid' || value === 'allow') return value ?? 'forbid';
  throw new TypeError(
    `createServerGate: \`selfApproval\` must be 'forbid' or 'allow' (got ${JSON.stringify(value) ?? typeof value}).`,
  );
}

function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new TypeError(
      `createServerGate: \`${name}\` must be a positive number of milliseconds (got ${String(value)}).`,
    );
  }
  return value;
}

/**
 * The `{ session, principal }` of a proposal, checked: a programmer's mistake throws at once.
 *
 * @example
 * const { session, principal } = checkProposeOptions(options);
 */
export function checkProposeOptions<T extends Omit<ServerProposeOptions, 'id'>>(options: T | undefined): T {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      'serverGate.propose: pass { session, principal }: the conversation and the authenticated user the model acts for.',
    );
  }
  if (typeof options.session !== 'string' || options.session === '')
    throw new TypeError('serverGate.propose: `session` must be a non-empty string (the conversation id).');
  if (typeof options.principal !== 'string' || options.principal === '') {
    throw new TypeError(
      'serverGate.propose: `principal` must be a non-empty string (the authenticated user the model acts for).',
    );
  }
  if (!storable(options.session) || !storable(options.principal))
    throw new TypeError(
      'serverGate.propose: `session` and `principal` may not hold a NUL character (the ledger cannot store it).',
    );
  const { onBehalfOf } = options as { readonly onBehalfOf?: unknown };
  if (
    onBehalfOf !== undefined &&
    !(typeof onBehalfOf === 'string' && onBehalfOf !== '' && storable(onBehalfOf))
  )
    throw new TypeError(
      'serverGate.propose: `onBehalfOf` must be a non-empty string without NUL characters (the person the agent acts for), or left out.',
    );
  return options;
}

/**
 * A person's reason as given, cut to 2,000 characters, or `fallback` when they gave none.
 *
 * @example
 * textOf(undefined, 'the user cancelled this call'); // 'the user cancelled this call'
 */
export function textOf(reason: unknown, fallback: string): string {
  if (typeof reason === 'string' && reason.trim() !== '') return reason.slice(0, 2000);
  return fallback;
}
