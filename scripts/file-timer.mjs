// Preloaded into every test file's process by scripts/test.mjs: when the file's process exits it
// appends the file's wall time (from the process's start, loading included) and its CPU time (its
// own, and that of the processes it started and waited for: Linux's /proc/self/stat) to the file named by
// COREGATE_TEST_TIMINGS, which the summary sorts to show where a run's time went. Node's own events
// cannot say it: a test's `file` is where it was declared (test/helpers/suite.ts for a suite made
// by describeEachStore), and a file's time is not reported.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const timings = process.env.COREGATE_TEST_TIMINGS;
// NODE_TEST_CONTEXT is set in the processes node's test runner starts for the files, not in the runner.
if (timings && process.env.NODE_TEST_CONTEXT && process.argv[1]) {
  const file = sourcePathOf(relative(process.cwd(), process.argv[1]));
  process.on('exit', () => {
    const own = process.cpuUsage();
    const cpuMs = Math.round((own.user + own.system) / 1000 + childrenCpuMs());
    appendFileSync(timings, `${JSON.stringify({ file, ms: Math.round(performance.now()), cpuMs })}\n`);
  });
}

/**
 * The runner runs test/x.test.ts compiled and bundled, as dist/bundled/test/x.test.js (or
 * dist/test/x.test.js, unbundled): reports name the source.
 */
export function sourcePathOf(path) {
  return path.replace(/^dist\/(?:bundled\/)?(test\/.*)\.js$/, '$1.ts');
}

/** CPU time of the children this process has waited for (cutime + cstime, in ticks of 10 ms), 0 where /proc is absent. */
function childrenCpuMs() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The fields after the command's name (which may hold spaces, within parentheses).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}
