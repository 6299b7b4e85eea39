import { OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, IsUUID, Length, MaxLength, ValidateBy, ValidateNested, ValidationOptions } from 'class-validator';
import { MAX_OIDC_URL_LENGTH } from '../../../infra/net/oidc-discovery.util';
import { MAX_IDP_METADATA_BYTES } from '../saml/metadata/idp-metadata-importer.service';
import { MAX_ALLOWED_DOMAINS_LENGTH, MAX_CERTIFICATE_LENGTH } from './provider-config.util';
import { SSO_PROVIDER_STATUSES } from './sso-provider.types';
import type { AttributeMapping, SsoProviderStatus, SsoProviderType } from './sso-provider.types';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

/** An absolute http(s) URL. Whether it is acceptable to call (https, public address) is checked by the service. */
function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          try {
            const url = new URL(value);
            return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
          } catch {
            return false;
          }
        },
        defaultMessage: (args) => `${args?.property ?? 'value'} must be an absolute http(s) URL`,
      },
    },
    options,
  );
}

/** Spec 2.3. Values name IdP claims (OIDC) or attributes (SAML). */
export class AttributeMappingDto implements AttributeMapping {
  @IsString() @Length(1, 255) email: string;
  @IsString() @Length(1, 255) name: string;
  @IsOptional() @IsString() @Length(1, 255) firstName?: string;
  @IsOptional() @IsString() @Length(1, 255) lastName?: string;
  @IsOptional() @IsString() @Length(1, 255) groups?: string;
}

/** Spec 2.1, plus the SAML fields (docs/sso-saml.md) and manual OIDC endpoints (spec 2.4). */
export class CreateSsoProviderDto {
  /** `partner` creates a partner-wide provider (partner-scope sessions only). Default `organization`. */
  @IsOptional() @IsIn(['organization', 'partner']) ownerScope?: 'organization' | 'partner';
  /** Required for partner-scope callers creating an organization provider; inferred for organization-scope callers. */
  @IsOptional() @IsUUID() orgId?: string;
  /** 1 to 255 characters. */
  @IsString() @Length(1, 255) name: string;
  @IsIn(['oidc', 'saml']) type: SsoProviderType;
  /** A preset id of GET /sso/presets; pre-fills scopes, attribute mapping and the issuer or SSO URL. */
  @IsOptional() @IsString() @Length(1, 64) preset?: string;
  /** Values of the preset's URL parameters, e.g. `{ "tenant": "contoso.onmicrosoft.com" }`. */
  @IsOptional() @IsObject() presetParams?: Record<string, string>;
  /** OIDC issuer; triggers discovery of the four endpoints. At most 500 characters. */
  @IsOptional() @IsHttpUrl() @MaxLength(MAX_OIDC_URL_LENGTH) issuer?: string;
  @IsOptional() @IsString() @Length(1, 255) clientId?: string;
  /** Write-only: stored encrypted, never returned (see hasClientSecret). */
  @IsOptional() @IsString() @Length(1, 4096) clientSecret?: string;
  @IsOptional() @IsHttpUrl() @MaxLength(MAX_OIDC_URL_LENGTH) authorizationUrl?: string;
  @IsOptional() @IsHttpUrl() @MaxLength(MAX_OIDC_URL_LENGTH) tokenUrl?: string;
  @IsOptional() @IsHttpUrl() @MaxLength(MAX_OIDC_URL_LENGTH) userInfoUrl?: string;
  @IsOptional() @IsHttpUrl() @MaxLength(MAX_OIDC_URL_LENGTH) jwksUrl?: string;
  /** Space-separated, must include openid. Default from the preset, else `openid profile email`. */
  @IsOptional() @IsString() @Length(1, 500) scopes?: string;
  /** SAML: the IdP's entity id, checked as the response Issuer. */
  @IsOptional() @IsString() @Length(1, 500) entityId?: string;
  /** SAML: the IdP's single-sign-on URL (HTTP-Redirect binding). */
  @IsOptional() @IsHttpUrl() @MaxLength(500) ssoUrl?: string;
  /** SAML: one or more PEM signing certificates. */
  @IsOptional() @IsString() @Length(1, MAX_CERTIFICATE_LENGTH) certificate?: string;
  @IsOptional() @IsString() @Length(1, 255) nameIdFormat?: string;
  @IsOptional() @IsBoolean() forceAuthn?: boolean;
  /** SAML: the IdP's metadata document; fills entityId, ssoUrl and every signing certificate (fields given explicitly win). */
  @IsOptional() @IsString() @Length(1, MAX_IDP_METADATA_BYTES) idpMetadataXml?: string;
  /** SAML: an https URL of the IdP's metadata, fetched once under the discovery rules; fills the same fields. Not stored. */
  @IsOptional() @IsHttpUrl() @MaxLength(2048) idpMetadataUrl?: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => AttributeMappingDto) attributeMapping?: AttributeMappingDto;
  /** Default true for organization providers; partner providers never provision. */
  @IsOptional() @IsBoolean() autoProvision?: boolean;
  @IsOptional() @IsUUID() defaultRoleId?: string;
  /** Comma-separated email domains; empty means all domains. At most 1000 characters. */
  @IsOptional() @IsString() @MaxLength(MAX_ALLOWED_DOMAINS_LENGTH) allowedDomains?: string;
  @IsOptional() @IsBoolean() enforceSSO?: boolean;
  @IsOptional() @IsBoolean() trustsIdpMfa?: boolean;
}

/**
 * Owner, protocol and preset are fixed at creation. `null` clears an optional field
 * (clientSecret, defaultRoleId, allowedDomains, endpoints, SAML fields).
 */
export class UpdateSsoProviderDto extends PartialType(
  OmitType(CreateSsoProviderDto, ['ownerScope', 'orgId', 'type', 'preset', 'presetParams'] as const),
) {}

export class SetSsoProviderStatusDto {
  @IsIn(SSO_PROVIDER_STATUSES) status: SsoProviderStatus;
}

export class ListSsoProvidersQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
  /** `partner` lists the caller's partner's own providers (partner-scope sessions only). */
  @IsOptional() @IsIn(['partner']) scope?: 'partner';
}

export class SsoProviderDto {
  id: Uuid;
  ownerScope: 'organization' | 'partner';
  orgId: Uuid | null;
  partnerId: Uuid | null;
  name: string;
  type: SsoProviderType;
  status: SsoProviderStatus;
  preset: string | null;
  issuer: string | null;
  clientId: string | null;
  hasClientSecret: boolean;
  authorizationUrl: string | null;
  tokenUrl: string | null;
  userInfoUrl: string | null;
  jwksUrl: string | null;
  scopes: string | null;
  entityId: string | null;
  ssoUrl: string | null;
  certificate: string | null;
  nameIdFormat: string | null;
  forceAuthn: boolean;
  attributeMapping: AttributeMappingDto;
  autoProvision: boolean;
  defaultRoleId: Uuid | null;
  allowedDomains: string | null;
  enforceSSO: boolean;
  trustsIdpMfa: boolean;
  /** Configuration generation: bumped by every configuration or status change. */
  generation: Int;
  createdBy: Uuid | null;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class SsoWarningDto {
  code: string;
  message: string;
  reason?: string;
}

export class SsoProviderResponseDto {
  success: true;
  provider: SsoProviderDto;
  /** Present when something was accepted with a caveat, e.g. discovery failed on create. */
  warnings?: SsoWarningDto[];
}

export class SsoProviderListDto {
  success: true;
  providers: SsoProviderDto[];
}

export class SsoPresetParameterDto {
  name: string;
  kind: 'host' | 'segment';
  description: string;
}

export class SsoPresetDto {
  id: string;
  name: string;
  type: SsoProviderType;
  parameters: SsoPresetParameterDto[];
  /** OIDC issuer template, `{name}` standing for a parameter. */
  issuer?: string;
  /** SAML SSO URL template. */
  ssoUrl?: string;
  scopes?: string;
  nameIdFormat?: string;
  attributeMapping: AttributeMappingDto;
}

export class SsoPresetListDto {
  success: true;
  presets: SsoPresetDto[];
}

export class SsoDiscoveredEndpointsDto {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  jwksUrl: string;
}

export class SsoTestErrorDto {
  reason: string;
  message: string;
}

export class SsoProviderTestDto {
  success: true;
  reachable: boolean;
  /** OIDC: what discovery returned now. */
  discovered?: SsoDiscoveredEndpointsDto;
  /** OIDC: whether the stored issuer and endpoints equal what discovery returned now. */
  endpointsMatch?: boolean;
  error?: SsoTestErrorDto;
}

export class SsoCheckProviderDto {
  id: Uuid;
  name: string;
  type: SsoProviderType;
}

/** `{ ssoEnabled: false }`, or the organization's oldest active provider (docs/sso-admin.md). */
export class SsoCheckDto {
  ssoEnabled: boolean;
  provider?: SsoCheckProviderDto;
  enforceSSO?: boolean;
  loginUrl?: string;
}
