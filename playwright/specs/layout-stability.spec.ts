import { expect, test } from '../playground.ts';

declare global {
  interface Window {
    layoutShifts: { value: number; sources: { html: string; inTranscript: boolean }[] }[];
  }
}

test('statuses change in place: no layout shift while calls stream, run and settle at a realistic pace', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('?pace=realistic');
  // The Layout Instability API reports every shift of a visible element; count them all, even
  // those right after the click that the CLS metric would forgive.
  await page.evaluate(() => {
    window.layoutShifts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as (PerformanceEntry & {
        value: number;
        sources?: { node?: Node }[];
      })[]) {
        window.layoutShifts.push({
          value: entry.value,
          sources: (entry.sources ?? []).map((source) => {
            const element = source.node instanceof Element ? source.node : source.node?.parentElement;
            return {
              html: element?.outerHTML.slice(0, 120) ?? 'a removed node',
              inTranscript: element?.closest('[data-testid="transcript"]') != null,
            };
          }),
        });
      }
    }).observe({ type: 'layout-shift' });
  });

  await playground.run('Three parallel calls, one invalid', /unicorn/);
  await playground.settled();
  await expect(playground.status(2)).toHaveAttribute('data-status', 'rejected');

  const shifts = await page.evaluate(() => window.layoutShifts);
  const total = shifts.reduce((sum, shift) => sum + shift.value, 0);
  console.log(`layout shift score while three calls streamed, ran and settled: ${total.toFixed(4)}`);
  await playground.screenshot('layout-stability', testInfo);
  // Nothing in the transcript moves as statuses change; the state panel moves only by the
  // changes a commit makes to it (a cart line pushing the cart's total row down).
  expect(shifts.flatMap((shift) => shift.sources).filter((source) => source.inTranscript)).toEqual([]);
  expect(total).toBeLessThan(0.005);
  // The model's next message can reach the page before the mirror settles a call, so a card must
  // be as tall settled as it was pending: a refused call's card (its reason takes two lines) is as
  // tall as a committed one's (its result takes one).
  const heights = await page
    .getByTestId('tool-call')
    .evaluateAll((cards) => cards.map((card) => card.getBoundingClientRect().height));
  expect(heights).toHaveLength(3);
  expect(new Set(heights).size, `card heights ${heights.join(', ')}`).toBe(1);
});
