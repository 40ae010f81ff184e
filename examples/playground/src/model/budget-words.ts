import { formatCents } from '../shop/shop-store.ts';

/**
 * The server gate's `budget_exceeded` message, in words a visitor reads: money as money, and the
 * chat as what the budget belongs to. The gate writes its message for any budget (a count of calls,
 * cents, tokens), so it gives bare numbers and the budget's name; this budget counts cents of the
 * chat's transfers. A message of another shape is answered `undefined`, and the caller shows it as
 * the gate wrote it.
 *
 * @example
 * budgetWords('budget "chat_transfers" allows 6000 in any 1 day for this session; 4500 is used and 1500 is left, and this call would take 3000');
 * // 'Over this chat’s transfer budget: $45.00 of $60.00 is used and $15.00 is left, and this transfer needs $30.00.'
 */
export function budgetWords(message: string): string | undefined {
  const found =
    /allows (\d+) in any .*?; (\d+) is used and (\d+) is left, and this call would take (\d+)/.exec(message);
  if (found === null) return undefined;
  const [max, used, left, wanted] = found.slice(1).map(Number) as [number, number, number, number];
  return `Over this chat’s transfer budget: ${formatCents(used)} of ${formatCents(max)} is used and ${formatCents(left)} is left, and this transfer needs ${formatCents(wanted)}.`;
}
