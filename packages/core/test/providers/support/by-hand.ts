import type { TurnReader } from '../../../src/index.ts';

/**
 * The loop the provider pages show for reading a stream yourself: push every event and end; when
 * the stream throws, fail the turn. The `finally` is what a careful app adds to be sure the turn
 * ends; after `fail()` it must change nothing. Returns what the stream threw, if it threw.
 */
export async function readByHand<E>(reader: TurnReader<E>, stream: AsyncIterable<E>): Promise<unknown> {
  try {
    for await (const event of stream) reader.push(event);
    reader.end();
  } catch (error) {
    reader.fail(error);
    return error;
  } finally {
    reader.end();
  }
  return undefined;
}

/** The nesting depth of a value: 0 for a scalar, 1 for `{}` or `[]`. */
export function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}
