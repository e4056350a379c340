// A second reporter for node's test runner (scripts/test.mjs): it writes one JSON line per failed
// test and the run's totals, so that the end of a long CI log names every failure of every run
// (the TAP of three runs is thousands of lines, and a log's tail shows only the last run's).
export default async function* failuresReporter(source) {
  for await (const event of source) {
    if (event.type === 'test:fail') {
      const { name, file, details } = event.data;
      const error = details?.error;
      // A suite fails when one of its tests does; the test itself is the line worth reading.
      if (error?.failureType === 'subtestsFailed') continue;
      const message = describeError(error?.cause ?? error);
      yield `${JSON.stringify({ kind: 'fail', name, file, message: message.slice(0, 2000) })}\n`;
    } else if (event.type === 'test:diagnostic') {
      const match = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(event.data.message);
      if (match) yield `${JSON.stringify({ kind: 'total', key: match[1], value: Number(match[2]) })}\n`;
    }
  }
}

/** The error's message and its causes' ("fetch failed" says nothing without its cause's code). */
function describeError(error) {
  const parts = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 4; current = current.cause, depth += 1) {
    if (typeof current !== 'object') {
      parts.push(String(current));
      break;
    }
    const code = typeof current.code === 'string' && !['ERR_TEST_FAILURE', 'ERR_ASSERTION'].includes(current.code) ? ` (${current.code})` : '';
    parts.push(`${current.message ?? String(current)}${code}`);
  }
  return parts.length === 0 ? 'failed' : parts.join('\n  caused by: ');
}
