// settings.js: contextStorage: { shared: { module: require('@channel-sessions/node-red/redis-context'), config: { url: 'redis://127.0.0.1:6379' } } }
module.exports = require('./dist/redis-context.js');
