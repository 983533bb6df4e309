// Preloaded into node-red-dev by .ci/scorecard.mjs: CI cannot reach the Flow Library's catalogue
// (only the npm registry), so its requests for it are answered with an empty catalogue instead of
// stopping the whole validation; every other request goes out as the tool makes it.
const { dirname } = require('node:path');

const toolDir = dirname(require.resolve('node-red-dev/package.json', { paths: [`${__dirname}/node-red-dev`] }));
const axios = require(require.resolve('axios', { paths: [toolDir] }));
const CATALOGUE = 'https://catalogue.nodered.org/';
const get = axios.get;
axios.get = function (url, ...rest) {
  if (String(url).startsWith(CATALOGUE)) return Promise.resolve({ status: 200, data: { modules: [] } });
  return get.call(this, url, ...rest);
};
