import { memo, type ReactElement } from 'react';
import { useStore } from 'zustand';
import { CATALOG, cartTotal, formatCents, type ShopStore } from '../shop/shop-store.ts';

/**
 * The app's own state, read straight from its Zustand store. Only a tool's commit writes that
 * store, so nothing in this panel can move unless a call committed.
 */
export const ShopPanel = memo(function ShopPanel({ shop }: { shop: ShopStore }): ReactElement {
  const state = useStore(shop);
  return (
    <section className="shop" aria-labelledby="shop-title" data-testid="app-state">
      <h2 id="shop-title" className="panel-title">
        Your shop
      </h2>
      <div className="wallet">
        <span className="wallet-label">Wallet</span>
        <strong className="wallet-amount" data-testid="wallet">
          {formatCents(state.balance_cents)}
        </strong>
      </div>

      <h3 className="shop-heading">Cart</h3>
      <div className="cart-box" role="region" aria-label="Cart" tabIndex={0}>
        {state.cart.length === 0 ? (
          <p className="shop-empty">The cart is empty.</p>
        ) : (
          <table className="cart">
            <thead>
              <tr>
                <th scope="col">Item</th>
                <th scope="col" className="numeric">
                  Qty
                </th>
                <th scope="col" className="numeric">
                  Total
                </th>
              </tr>
            </thead>
            <tbody>
              {state.cart.map((line) => (
                <tr key={line.sku}>
                  <td>{CATALOG[line.sku].name}</td>
                  <td className="numeric">{line.quantity}</td>
                  <td className="numeric">{formatCents(line.quantity * line.unit_cents)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row" colSpan={2}>
                  Cart total
                </th>
                <td className="numeric" data-testid="cart-total">
                  {formatCents(cartTotal(state.cart))}
                </td>
              </tr>
            </tfoot>
          </table>
        )}
      </div>

      <dl className="shop-facts">
        <dt>Orders</dt>
        <dd>
          {state.orders.length === 0
            ? 'none'
            : state.orders
                .map((order) => `${order.order_id} · ${formatCents(order.amount_cents)}`)
                .join(', ')}
        </dd>
        <dt>Transfers</dt>
        <dd>
          {state.transfers.length === 0
            ? 'none'
            : state.transfers.map((sent) => `${formatCents(sent.amount_cents)} to ${sent.to}`).join(', ')}
        </dd>
        <dt>Coupons</dt>
        <dd>{state.coupons.length === 0 ? 'none' : state.coupons.join(', ')}</dd>
        <dt>Delivery</dt>
        <dd>{state.delivery_slot ?? 'not booked'}</dd>
      </dl>

      <details className="raw-state">
        <summary>Raw state</summary>
        <pre data-testid="raw-state">{JSON.stringify(state, null, 2)}</pre>
      </details>
    </section>
  );
});
