// settings.js: contextStorage: { durable: { module: require('@channel-sessions/node-red/sqlite-context') } }
module.exports = require('./dist/sqlite-context.js');
