/**
 * What an operation's folder gives the docs page (src/operations/<operation>/examples.ts): the
 * examples of its routes, on the demo data (demo-examples.ts says why every answer has one).
 */
import type { ErrorEntry } from '../core/error-catalogue.js';

/** A refusal an error status illustrates, with a message naming demo values as the real one does. */
export interface ExampleRefusal {
  entry: ErrorEntry;
  message: string;
}

export interface OperationExamples {
  /** The operation's request body, valued on the business date where it holds a date the core checks. */
  request(businessDate: string): unknown;
  /** The 200 and 202 bodies of the folder's routes (the operation's and its reads'), by operationId and status. */
  successes(businessDate: string): Record<string, Record<string, unknown>>;
  /** The refusal a status illustrates on the folder's routes (the business statuses: 400, 403, 404, 409, 422). */
  refusal(status: number, businessDate: string): ExampleRefusal | undefined;
  /** Where a later call finds a value of the operation's answer (OpenAPI links), by operationId. */
  links: Record<string, Record<string, unknown>>;
  /** Components whose own example follows the business date (the request schema's), by name. */
  datedSchemas: Record<string, (businessDate: string) => unknown>;
}
