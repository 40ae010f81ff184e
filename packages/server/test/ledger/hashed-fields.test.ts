// The chain hashes each event's fields as RFC 8785 canonical JSON. They are written out field by
// field, not canonicalised as an object; the text must be the same, or every chain written before
// would stop verifying.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { hashedFields } from '../../src/ledger/chain/chain.ts';
import type { EventsTable } from '../../src/ledger/schema.ts';

/** The canonical JSON of the event as an object, as the chain has always hashed it. */
function canonicalFields(row: EventsTable, seq: number): string {
  return canonicalize({
    seq,
    callId: row.call_id,
    session: row.session,
    from: row.from_status,
    to: row.to_status,
    actor: row.actor,
    at: row.at,
    reason: row.reason === null ? null : (JSON.parse(row.reason) as unknown),
    record: row.record === null ? null : createHash('sha256').update(row.record).digest('hex'),
  }) as string;
}

const base: EventsTable = {
  seq: 7,
  call_id: 'call_1',
  session: 'chat_1',
  from_status: 'executing',
  to_status: 'committed',
  actor: 'user_42',
  at: 1_767_225_600_000,
  reason: null,
  record: '{"id":"call_1"}',
  prev_hash: '0'.repeat(64),
  hash: '',
};

describe('the hashed fields of an event', () => {
  const rows: [string, EventsTable][] = [
    ['a move', base],
    ['a first write', { ...base, from_status: null, to_status: 'pending' }],
    [
      'a refusal without a record',
      {
        ...base,
        from_status: 'awaiting_approval',
        to_status: 'awaiting_approval',
        record: null,
        reason: JSON.stringify({
          message: 'no "quotes" \\ here',
          code: 'stale',
          issues: [{ path: '/a', message: 'é\u2028\u0001' }],
        }),
      },
    ],
    [
      'text that JSON escapes, and astral characters',
      {
        ...base,
        call_id: 'c"\\\n\u0000\ud83d\ude00',
        session: '\ud800',
        actor: 'ünïcødé',
        record: 'x\u2029',
      },
    ],
    ['times and numbers read back as text', { ...base, at: '1767225600000' as unknown as number }],
    ['large and small numbers', { ...base, at: 1e21, seq: 9_007_199_254_740_991 }],
  ];
  for (const [what, row] of rows) {
    it(`are the canonical JSON of the event: ${what}`, () => {
      expect(hashedFields(row, row.seq)).toBe(canonicalFields(row, row.seq));
      expect(hashedFields(row, row.seq + 1)).toBe(canonicalFields(row, row.seq + 1));
    });
  }
});
