import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/**
 * undici's connector, made to report a TLS alert a receiver sends as the request's error.
 *
 * With TLS 1.3 the client's handshake is finished before the server has checked the client's
 * certificate, so a receiver that requires one (or refuses the one it got) answers the request
 * with an alert (`certificate required`, `unknown ca`, …) and closes. undici sees the alert as a
 * socket error, then the close, and reports the close ("other side closed"): the attempt would be
 * a retried connection reset. Ending the socket with the alert keeps the alert as the error, so
 * the classification can call it a TLS failure. One listener per connection, none per request.
 */
export function alertReportingConnector(options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) => connect(opts, (...args) => {
    const socket = args[1];
    if (socket) socket.on('error', endWithAlert);
    callback(...args);
  });
}

function endWithAlert(this: Socket, err: Error & { code?: unknown }): void {
  if (typeof err.code === 'string' && err.code.startsWith('ERR_SSL_') && !this.destroyed) this.destroy(err);
}
