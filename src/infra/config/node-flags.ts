/**
 * The Node.js flags the service runs with, wherever it is started: `npm start`, the Docker image's
 * CMD, and every process the benchmark forks (node-flags.spec.ts checks that the first two say the
 * same as this list).
 *
 * `--max-semi-space-size=32` (MB): a request allocates short-lived objects (parsed rows, DTOs, the
 * JSON answer), and with V8's default young generation the scavenger runs every few hundred
 * requests and was a tenth of the service's CPU under load. A larger semi-space lets most of them
 * die before a scavenge, which cut CPU per request by 5–25 % and the request list's p99 by about a
 * third (docs/operations.md, Runtime flags); it costs up to about 100 MB of resident memory at peak.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=32']);
