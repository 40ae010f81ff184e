import { createStore } from 'zustand/vanilla';

/**
 * Whom this page decides calls as: the account holder, or the manager (the second approver a wire
 * needs). The server takes the page's word for it only because this is a playground; a real app
 * signs the manager in.
 */
export const actingAs = createStore<'holder' | 'manager'>()(() => 'holder');

/** The header the page's requests to the server gate carry for it. */
export const actingHeaders = (): Record<string, string> =>
  actingAs.getState() === 'manager' ? { 'x-playground-as': 'manager' } : {};
