/** OpenAPI schema of the one error body every route returns (docs/api-conventions.md). */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['success', 'statusCode', 'code', 'error', 'requestId'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    statusCode: { type: 'integer', example: 409 },
    code: { type: 'string', example: 'race_lost', description: 'Stable snake_case machine code' },
    error: { type: 'string', example: 'Elevation request already being actuated' },
    requestId: { type: 'string' },
    details: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } },
    retryAfter: { type: 'integer', description: 'Seconds to wait before sending the request again: on 429 `rate_limited` and 503 `database_unavailable` (also the `Retry-After` header)' },
  },
  additionalProperties: true,
};
