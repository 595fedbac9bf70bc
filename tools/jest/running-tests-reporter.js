// A Jest reporter that records which test files and tests have started and finished, one line per
// event, in FASTLOOP_TEST_PROGRESS_DIR/<pid>.log. .ci/run reads it when the run overstays its
// budget, to say which tests were still running. Without the variable it does nothing.
const { appendFileSync, mkdirSync } = require('node:fs');
const { join, relative } = require('node:path');

class RunningTestsReporter {
  constructor() {
    this.dir = process.env.FASTLOOP_TEST_PROGRESS_DIR;
    if (this.dir) mkdirSync(this.dir, { recursive: true });
  }

  write(what, path, name) {
    if (!this.dir) return;
    const file = relative(process.cwd(), path);
    appendFileSync(
      join(this.dir, `${process.pid}.log`),
      `${new Date().toISOString()}\t${what}\t${file}${name ? `\t${name}` : ''}\n`,
    );
  }

  onTestFileStart(test) {
    this.write('file-start', test.path);
  }

  onTestCaseStart(test, info) {
    this.write('test-start', test.path, info.fullName);
  }

  onTestCaseResult(test, result) {
    this.write('test-done', test.path, result.fullName);
  }

  onTestFileResult(test) {
    this.write('file-done', test.path);
  }
}

module.exports = RunningTestsReporter;
