/**
 * The default log destination (src/log-destination.ts): the lines of one turn of the event loop
 * leave in one write, in the order they were logged; a fatal line leaves at once; a process that
 * exits, or crashes, right after logging still writes its lines.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { logBatchCharsMax, TurnBatchedDestination } from '../../src/log-destination.js';
import { createLogger } from '../../src/log.js';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function recordingDestination(): { destination: TurnBatchedDestination; writes: string[] } {
  const writes: string[] = [];
  return { destination: new TurnBatchedDestination({ write: (text: string) => writes.push(text) }), writes };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('the lines of one turn leave in one write, in order, once the turn is over', async () => {
  const { destination, writes } = recordingDestination();
  destination.write('one\n');
  destination.write('two\n');
  destination.write('three\n');
  assert.deepEqual(writes, [], 'nothing is written during the turn');
  await nextTurn();
  assert.deepEqual(writes, ['one\ntwo\nthree\n']);
  destination.write('four\n');
  await nextTurn();
  assert.deepEqual(writes, ['one\ntwo\nthree\n', 'four\n']);
});

test('a fatal line is written at once, with the lines before it', () => {
  const { destination, writes } = recordingDestination();
  const logger = createLogger({ destination });
  logger.info('before');
  logger.fatal('the end');
  assert.equal(writes.length, 1);
  const lines = (writes[0] as string).trim().split('\n').map((line) => JSON.parse(line) as { msg: string });
  assert.deepEqual(lines.map((line) => line.msg), ['before', 'the end']);
});

test('a turn that logs more than the batch limit writes as it goes: the batch stays bounded', () => {
  const { destination, writes } = recordingDestination();
  const line = `${'x'.repeat(1023)}\n`;
  for (let index = 0; index < (2 * logBatchCharsMax) / line.length; index++) destination.write(line);
  assert.equal(writes.length, 2);
  for (const text of writes) assert.ok(text.length <= logBatchCharsMax + line.length);
});

test('a process that exits or crashes right after logging still writes its lines to standard output', () => {
  const logModule = pathToFileURL(join(repoRoot, 'src/log.ts')).href;
  for (const ending of ['process.exit(3)', 'throw new Error("crash")']) {
    const script = `import { createLogger } from ${JSON.stringify(logModule)}; const logger = createLogger(); logger.info('first'); logger.warn('second'); ${ending};`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    const messages = child.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.deepEqual(messages, ['first', 'second'], `${ending}: ${child.stderr}`);
  }
});
