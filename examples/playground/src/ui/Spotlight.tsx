import type { ReactElement } from 'react';
import { useStore } from 'zustand';
import type { PageViewStore } from '../shop/page-tools.ts';
import { CATALOG, formatCents } from '../shop/shop-store.ts';

/**
 * What the model put on the visitor's screen with `show_product`: the page's own view, which only
 * the browser's own gate writes. It is not the shop's state, and the server knows nothing of it.
 */
export function Spotlight({ view }: { view: PageViewStore }): ReactElement | null {
  const spotlight = useStore(view, (current) => current.spotlight);
  if (spotlight === null) return null;
  return (
    <section className="spotlight" aria-labelledby="spotlight-title" data-testid="spotlight">
      <h2 id="spotlight-title" className="panel-title">
        On your screen{' '}
        <span className="call-where" data-runs="page">
          set in your browser
        </span>
      </h2>
      <p>
        <strong>{CATALOG[spotlight].name}</strong> {formatCents(CATALOG[spotlight].price_cents)}
      </p>
    </section>
  );
}
