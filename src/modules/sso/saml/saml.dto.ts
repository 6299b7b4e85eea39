/**
 * The identity provider's auto-submitted form at the assertion consumer service (HTTP-POST
 * binding). Read as it comes: anything missing or malformed ends in a redirect to
 * `/login?error=<code>`, never in a validation error.
 */
export class SamlAcsFormDto {
  /** The base64-encoded SAML Response. */
  SAMLResponse: string;
  /** The state this service sent with the AuthnRequest; it must match the sign-in's state cookie. */
  RelayState?: string;
}
