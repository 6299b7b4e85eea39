import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';
import type { DateTime, Uuid } from '../../../common/openapi/formats';
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

export class SamlSpKeyDto {
  /** The SP certificate (PEM) as the metadata publishes it. */
  certificate: string;
  createdAt: DateTime;
  /** Null for the current key (it signs and receives encrypted assertions); for a replaced one, when its overlap window ends. */
  retiresAt: DateTime | null;
}

export class SamlSpSettingsDto {
  providerId: Uuid;
  /** The IdP's Single Logout service (HTTP-Redirect); null: no Single Logout. */
  idpSloUrl: string | null;
  /** When true, a response whose assertion is not encrypted is refused. */
  requireEncryptedAssertions: boolean;
  /** This provider's SP metadata, for the IdP's administrator. */
  metadataUrl: string;
  /** This provider's Single Logout service, to register at the IdP. */
  singleLogoutUrl: string;
  /** The published SP keys, newest first (empty until the metadata is first read or a key is rotated in). */
  keys: SamlSpKeyDto[];
}

export class UpdateSamlSpSettingsDto {
  /** The IdP's Single Logout URL (HTTP-Redirect binding), https; null removes it. At most 500 characters. */
  @IsOptional() @IsString() @Length(1, 500) idpSloUrl?: string | null;
  @IsOptional() @IsBoolean() requireEncryptedAssertions?: boolean;
}
