// mocha reads this for `npm test` (scripts/test.mjs passes the compiled files) and for a direct
// `npx mocha .test-build/test/<file>.test.js`. Tests are TypeScript, compiled by tsc into
// .test-build/ first; mocha runs the JavaScript.
module.exports = {
  reporter: 'spec',
  parallel: true,
  jobs: 2,
  // Most suites start a real Node-RED in a before() hook; on a busy 2-core machine that can take
  // several seconds. Suites that need more say so with this.timeout().
  timeout: 60000,
  slow: 2000,
  // A test that leaves a server or a child process running is a bug to fix, not to hide: no --exit.
  exit: false,
};
