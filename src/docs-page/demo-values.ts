/**
 * The demo data's facts the docs page's examples are made of (demo/sandbox.json; test/docs-page
 * checks they agree), and sample values in the formats the core generates: shared by the
 * operations' examples (src/operations/<operation>/examples.ts) and the page's own
 * (demo-examples.ts).
 */
import { BusinessCalendar } from '../core/business-calendar.js';

/**
 * The demo data's calendar: the example's value date is the first business day on or after the
 * core's business date, as the core wants.
 */
export const demoCalendar = new BusinessCalendar(['SATURDAY', 'SUNDAY'], ['2026-04-03', '2026-05-01', '2026-12-25'], '2026-03-02');

/** Sample values in the formats the core generates (TD + 15 digits, MLO + 15 digits, time-ordered UUIDs). */
export const sampleContractNumber = 'TD000012345678901';
export const sampleOperationReference = '0192f0c4-5b6e-7c1a-9d2e-3f4a5b6c7d8e';
export const sampleExecutionReference = '0192f0c4-6a1b-7d2c-8e3f-4a5b6c7d8e9f';
export const sampleLoanOperationId = 'MLO000098765432101';
