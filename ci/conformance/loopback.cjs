// Preloaded into supergateway (node -r): its HTTP server calls listen(port) and so binds every
// interface; this makes each listen without a host bind 127.0.0.1 only.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    if (first.path === undefined && first.host === undefined) {
      args[0] = { ...first, host: '127.0.0.1' };
    }
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof second !== 'string') args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
