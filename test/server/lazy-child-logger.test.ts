/**
 * A request's logger is made on first use (src/log.ts, lazyChildLoggerFactory): lines logged
 * through it carry the request id as pino's own child would, and a request that logs nothing
 * through it costs no child logger.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger, lazyChildLoggerFactory } from '../../src/log.js';

function capturingLogger(level = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

test('a request logger logs with the request id binding, as a pino child would', async () => {
  const { logger, lines } = capturingLogger();
  const child = lazyChildLoggerFactory(logger, { reqId: 'req-1' }, {});
  child.info({ route: '/x' }, 'hello');
  child.error(new Error('boom'), 'failed');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    lines.map((line) => [line.msg, line.reqId, line.service]),
    [
      ['hello', 'req-1', 'coregate'],
      ['failed', 'req-1', 'coregate'],
    ],
  );
  assert.equal((lines[1]?.err as { message?: string }).message, 'boom');
});

test('a request logger that nothing logs through makes no child; levels answer from the parent', () => {
  const { logger } = capturingLogger('info');
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children += 1;
    return child(...args);
  }) as typeof logger.child;
  const lazy = lazyChildLoggerFactory(logger, { reqId: 'req-2' }, {});
  assert.equal(lazy.isLevelEnabled('debug'), false);
  assert.equal(lazy.isLevelEnabled('info'), true);
  assert.equal(lazy.level, 'info');
  lazy.debug('not at info');
  assert.equal(children, 0, 'no child for a level that is off, nor for reading the level');
  lazy.warn('now');
  assert.equal(children, 1);
});
