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
      const cause = error?.cause ?? error;
      const message = cause instanceof Error ? cause.message : String(cause ?? error?.message ?? 'failed');
      yield `${JSON.stringify({ kind: 'fail', name, file, message: message.slice(0, 2000) })}\n`;
    } else if (event.type === 'test:diagnostic') {
      const match = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(event.data.message);
      if (match) yield `${JSON.stringify({ kind: 'total', key: match[1], value: Number(match[2]) })}\n`;
    }
  }
}
