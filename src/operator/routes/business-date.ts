/**
 * The operator API's business date (design-11, docs/business-days.md), registered by the operator
 * plugin inside its authenticated scope under /operator/v1:
 *   GET  /business-date          → { "businessDate": "2026-03-02" }
 *   POST /business-date/advance  { "to": "YYYY-MM-DD" } → 200 EndOfDayReport
 * 400 when `to` is not a date, goes backwards or spans too far; 502 when a remote core fails, 504
 * when it does not answer in time. Errors: { status, reason, message }.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { isCalendarDate } from '../../core/calendar-date.js';
import { advanceDaysMax, goesBackwards, spansTooFar } from '../../core/end-of-day/days.js';
import { BusinessDateBackwards, CoreTimeout, CoreUnavailable, type CoreBankingPort } from '../../core/port.js';
import { operatorErrorBody } from '../errors.js';

export interface BusinessDateRoutesOptions {
  core: CoreBankingPort;
}

function problem(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send(operatorErrorBody(status, message));
}

/** Core failures as the operator API answers them; anything else is the plugin's 500. */
async function answeringCoreFailures<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T | FastifyReply> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BusinessDateBackwards) return problem(reply, 400, error.message);
    if (error instanceof CoreTimeout) return problem(reply, 504, `${error.message}; the end of day goes on in the core: read the business date, or advance again to resume`);
    if (error instanceof CoreUnavailable) return problem(reply, 502, `${error.message}; try again: an advance resumes where it stopped`);
    throw error;
  }
}

export function businessDateRoutes(options: BusinessDateRoutesOptions): FastifyPluginAsync {
  const { core } = options;
  return async (app) => {
    app.get('/business-date', async (_request, reply) => answeringCoreFailures(reply, async () => ({ businessDate: await core.businessDate() })));

    app.post('/business-date/advance', async (request, reply) => {
      const body = request.body as { to?: unknown } | null | undefined;
      const to = typeof body === 'object' && body !== null ? body.to : undefined;
      if (typeof to !== 'string' || !isCalendarDate(to)) {
        return problem(reply, 400, 'The body must be {"to": "YYYY-MM-DD"}: the new business date, a real calendar date');
      }
      return answeringCoreFailures(reply, async () => {
        const current = await core.businessDate();
        if (goesBackwards(current, to)) throw new BusinessDateBackwards(current, to);
        if (spansTooFar(current, to)) {
          return problem(reply, 400, `The business date is ${current}: one advance spans at most ${advanceDaysMax} days; advance in steps`);
        }
        return core.advanceBusinessDate(to);
      });
    });
  };
}
