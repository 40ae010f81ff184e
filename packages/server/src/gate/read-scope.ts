/**
 * Who a read of one call answers to. With a principal, the read answers only a call of a session
 * that `canSee` lets that principal see, exactly as `calls()` decides, and for any other call the
 * same as for an id the ledger does not hold. Without one, the read is for trusted server code.
 *
 * @example
 * const call = await serverGate.get(request.params.id, { principal: user.id }); // undefined unless user may see it
 */
export interface ReadScope {
  readonly principal: string;
}

/**
 * The principal a scoped read names, or `undefined` for an unscoped (trusted) read. A scope given
 * without a usable principal throws: answering it as trusted would show the call to anyone.
 *
 * @example
 * const principal = scopedPrincipal('serverGate.get', options);
 */
export function scopedPrincipal(where: string, scope: ReadScope | undefined): string | undefined {
  if (scope === undefined) return undefined;
  const principal =
    typeof scope === 'object' && scope !== null ? (scope as { principal?: unknown }).principal : undefined;
  if (typeof principal !== 'string' || principal === '') {
    throw new TypeError(
      `${where}: \`principal\` must be a non-empty string (the authenticated user asking); leave the options out only in trusted server code.`,
    );
  }
  return principal;
}
