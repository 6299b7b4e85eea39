/**
 * The Node.js flags the service runs with, wherever it is started: `npm start`, the Docker image's
 * CMD, and every process the benchmark forks (node-flags.spec.ts checks that the first two say the
 * same as this list).
 *
 * `--max-semi-space-size=32` (MiB): a request allocates short-lived objects (parsed rows, DTOs, the
 * JSON answer), and with V8's default young generation (semi-spaces of at most 16 MiB) the
 * scavenger was about a tenth of the service's CPU under load. Twice the room lets more of them die
 * before a scavenge: 6–21 % less CPU per request on the GET routes (docs/operations.md, Runtime
 * flags), for up to about 100 MB more resident memory at peak.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=32']);
