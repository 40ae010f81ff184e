import { useToolCalls } from '@toolgate/react';
import { memo, useEffect, useState, useSyncExternalStore, type ReactElement } from 'react';
import { actingAs } from '../chat/acting-as.ts';
import { formatCents } from '../shop/shop-store.ts';

const MONEY = new Set(['transfer_funds', 'wire_funds']);

interface BudgetView {
  readonly max: number;
  readonly used: number;
  readonly left: number;
}

/**
 * The server's policy, as this visitor meets it: the chat's transfer budget (what the ledger counts
 * as used and left, read again whenever a transfer or wire moves), and the switch that makes this
 * page approve as the manager, the second approver a wire needs.
 */
export const PolicyPanel = memo(function PolicyPanel({ chatId }: { chatId: string }): ReactElement {
  const moves = useToolCalls((call) => MONEY.has(call.name))
    .map((call) => `${call.id}:${call.status}:${call.input === undefined ? '' : JSON.stringify(call.input)}`)
    .join(' ');
  const [budget, setBudget] = useState<BudgetView | undefined>(undefined);
  useEffect(() => {
    let current = true;
    void fetch(`/api/chat/${encodeURIComponent(chatId)}/budget`)
      .then((response) => (response.ok ? (response.json() as Promise<BudgetView>) : undefined))
      .then((view) => current && view !== undefined && setBudget(view))
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [chatId, moves]);
  const role = useSyncExternalStore(actingAs.subscribe, actingAs.getState);
  return (
    <section className="policy" aria-labelledby="policy-title" data-testid="policy">
      <h2 id="policy-title" className="panel-title">
        Policy
      </h2>
      <p className="budget" data-testid="budget" data-used={budget?.used} data-left={budget?.left}>
        {budget === undefined ? (
          'Transfer budget: …'
        ) : (
          <>
            Transfers in this chat: <strong>{formatCents(budget.used)}</strong> of {formatCents(budget.max)}{' '}
            used · <strong>{formatCents(budget.left)}</strong> left
          </>
        )}
      </p>
      <p className="policy-note">
        A transfer waiting for approval already counts. New chat starts a fresh budget.
      </p>
      <label className="manager-switch">
        <input
          type="checkbox"
          data-testid="manager-switch"
          checked={role === 'manager'}
          onChange={(event) => actingAs.setState(event.currentTarget.checked ? 'manager' : 'holder', true)}
        />{' '}
        Approve as the manager
      </label>
    </section>
  );
});
