/** The four OIDC endpoints a provider names, by their field in a provider's configuration (discovery fills them). */
export const ENDPOINT_FIELDS = ['authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl'] as const;
export type EndpointField = (typeof ENDPOINT_FIELDS)[number];
