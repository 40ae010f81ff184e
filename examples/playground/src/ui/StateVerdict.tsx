import type { ReactElement } from 'react';
import { useStore } from 'zustand';
import type { VerdictStore } from '../chat/state-verdict.ts';

/**
 * Says what the last settled call did to the app's state: changed the shop by committing, changed
 * only this page's view (a tool of the browser's own gate), acted only in another system (a card
 * payment, at the provider), or left it exactly as it was, and why.
 * The count of state changes makes "changed once" visible. It is a polite live region, so each new
 * verdict is announced.
 */
export function StateVerdict({ verdict }: { verdict: VerdictStore }): ReactElement {
  const { changes, last } = useStore(verdict);
  const outcome =
    last === undefined
      ? 'idle'
      : last.status !== 'committed'
        ? 'unchanged'
        : last.writes === 'shop'
          ? 'changed'
          : last.writes;
  return (
    <div
      className="verdict"
      data-testid="state-verdict"
      data-verdict={outcome}
      data-changes={changes}
      role="status"
      aria-live="polite"
      aria-atomic="true"
    >
      <span className="verdict-badge" aria-hidden="true">
        {outcome === 'changed' ? '●' : outcome === 'idle' ? '·' : '○'}
      </span>
      <p className="verdict-text">
        {last === undefined ? (
          'No call has settled yet. The state above changes only when a call commits.'
        ) : outcome === 'changed' ? (
          <>
            <strong>Changed</strong> by <code>{last.name}</code>, committed.
          </>
        ) : outcome === 'elsewhere' ? (
          <>
            <strong>Committed</strong>: <code>{last.name}</code> acted in another system (the payment
            provider), not the shop.
          </>
        ) : outcome === 'view' ? (
          <>
            <strong>Committed</strong>: <code>{last.name}</code> changed only this page’s view, not the shop.
          </>
        ) : (
          <>
            <strong>Unchanged</strong>: <code>{last.name || '(no name)'}</code>{' '}
            {last.status === 'failed' ? 'failed' : `was ${last.status}`}
            {last.code === undefined ? '' : ` (${last.code})`}.
          </>
        )}
      </p>
      <span className="verdict-count">
        {changes} state {changes === 1 ? 'change' : 'changes'}
      </span>
    </div>
  );
}
