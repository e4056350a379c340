/**
 * What a business rule answers: the value it decided, or a typed refusal. Expected failures are
 * values (TigerBeetle's rule); only a broken invariant throws.
 */
import { BusinessRefusal, type ErrorEntry } from './error-catalogue.js';

export type Decision<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: BusinessRefusal };

export function accept<T>(value: T): Decision<T> {
  return { ok: true, value };
}

export function refuse<T = never>(entry: ErrorEntry, message: string): Decision<T> {
  return { ok: false, refusal: new BusinessRefusal(entry, message) };
}
