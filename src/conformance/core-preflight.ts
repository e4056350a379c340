/**
 * The kit's first look at a core URL, before any rule: that something answers there, and that it
 * answers the protocol's JSON. An unreachable URL, a web page, the API's own URL or an answer the
 * API's adapter could not read (compressed, not UTF-8) each get one line saying what is wrong and
 * what --core-url should name.
 */
import type { Clock } from '../core/clock.js';
import { paths } from '../core-http/protocol.js';
import { ConformanceSetupError } from './conformance-errors.js';
import { ExchangeLog } from './exchange-log.js';
import { WireClient, WireFailure } from './wire-client.js';

export async function checkCoreAnswers(coreUrl: string, clock: Clock, timeoutMs: number): Promise<void> {
  const wire = new WireClient(coreUrl, new ExchangeLog(), clock, timeoutMs);
  let answer;
  try {
    answer = await wire.send('GET', paths.ready);
  } catch (error) {
    if (error instanceof WireFailure && error.status !== undefined) {
      throw new ConformanceSetupError(`the core at ${coreUrl} ${error.message} to GET ${paths.ready}: coregate's adapter reads plain UTF-8 JSON, uncompressed (docs/core-protocol.md, "Conventions")`);
    }
    throw new ConformanceSetupError(`cannot reach the core at ${coreUrl}: ${(error as Error).message} (is it running? --core-url names its base URL, e.g. http://localhost:8081)`);
  }
  if (!/^application\/json\b/i.test(answer.contentType)) {
    throw new ConformanceSetupError(
      `the core at ${coreUrl} answered GET ${paths.ready} with ${answer.status} ${answer.contentType === '' ? 'and no Content-Type' : answer.contentType.split(';')[0]}, not the protocol's JSON: --core-url must name a core that speaks the remote core protocol (docs/core-protocol.md), such as coregate core serve's URL`,
    );
  }
  if (answer.status !== 200) {
    throw new ConformanceSetupError(`the core at ${coreUrl} is not ready: GET ${paths.ready} answered ${answer.status} ${answer.text.slice(0, 200)}`);
  }
}
