import type { ToolCallRecord } from '@toolgate/core';
import { useToolCalls } from '@toolgate/react';
import { memo, useEffect, useState, type ReactElement } from 'react';
import { api } from '../chat/api.ts';
import type { CardCharge } from '../shop/card-payment.ts';
import { formatCents } from '../shop/shop-store.ts';

const cardPayments = (call: ToolCallRecord) => call.name === 'pay_by_card';

/**
 * The payment provider's own record of this conversation's card charges, as its dashboard would
 * show them: how many charges it made, and which were refunded. It is read again whenever a card
 * payment moves, is held in doubt, or is refunded, so that what the card says can be checked
 * against what the provider did.
 */
export const ProviderCharges = memo(function ProviderCharges({ chat }: { chat: string }): ReactElement {
  const payments = useToolCalls(cardPayments);
  const [charges, setCharges] = useState<readonly CardCharge[] | undefined>(undefined);
  const moved = payments
    .map((call) => `${call.id}:${call.status}:${call.doubt?.at ?? ''}:${call.compensation?.status ?? ''}`)
    .join(' ');
  useEffect(() => {
    let current = true;
    api.payments(chat).then(
      (answer) => current && setCharges(answer.charges),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [chat, moved]);
  return (
    <section className="provider" aria-labelledby="provider-title" data-testid="provider-charges">
      <h3 id="provider-title" className="shop-heading">
        At the payment provider
      </h3>
      {charges === undefined || charges.length === 0 ? (
        <p className="shop-empty">No card charges.</p>
      ) : (
        <>
          <p data-testid="provider-charge-count">
            {charges.length === 1 ? '1 charge' : `${charges.length} charges`}
          </p>
          <ul className="provider-charges">
            {charges.map((charge) => (
              <li key={charge.id} data-testid="provider-charge" data-refunded={charge.refund !== undefined}>
                <code>{charge.id}</code> · {formatCents(charge.amount_cents)} · {charge.payment_method} ·{' '}
                {charge.refund === undefined ? 'paid' : `refunded (${charge.refund})`}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
});
