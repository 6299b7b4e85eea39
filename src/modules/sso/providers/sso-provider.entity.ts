import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumns } from '../../../infra/database/entity-base';
import type { AttributeMapping, SsoProviderRecord, SsoProviderStatus, SsoProviderType } from './sso-provider.types';

/**
 * sso_providers (migration 1763700200000): one OIDC or SAML identity provider of an organization
 * or a partner. Written only by SsoProviderRepository. The service chooses the id before the
 * network checks, so it is not generated here.
 */
@Entity({ name: 'sso_providers' })
export class SsoProviderEntity extends TimestampColumns implements SsoProviderRecord {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 8 })
  type: SsoProviderType;

  @Column({ type: 'varchar', length: 16 })
  status: SsoProviderStatus;

  @Column({ type: 'varchar', length: 64, nullable: true })
  preset: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  issuer: string | null;

  @Column({ name: 'client_id', type: 'varchar', length: 255, nullable: true })
  clientId: string | null;

  /** Sealed by SecretBoxService (clientSecretContext); opened only by SsoProviderLookupService.clientSecret. */
  @Column({ name: 'client_secret', type: 'text', nullable: true })
  clientSecretSealed: string | null;

  @Column({ name: 'authorization_url', type: 'varchar', length: 500, nullable: true })
  authorizationUrl: string | null;

  @Column({ name: 'token_url', type: 'varchar', length: 500, nullable: true })
  tokenUrl: string | null;

  @Column({ name: 'userinfo_url', type: 'varchar', length: 500, nullable: true })
  userInfoUrl: string | null;

  @Column({ name: 'jwks_url', type: 'varchar', length: 500, nullable: true })
  jwksUrl: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  scopes: string | null;

  @Column({ name: 'entity_id', type: 'varchar', length: 500, nullable: true })
  entityId: string | null;

  @Column({ name: 'sso_url', type: 'varchar', length: 500, nullable: true })
  ssoUrl: string | null;

  @Column({ type: 'text', nullable: true })
  certificate: string | null;

  @Column({ name: 'name_id_format', type: 'varchar', length: 255, nullable: true })
  nameIdFormat: string | null;

  @Column({ name: 'force_authn', type: 'boolean' })
  forceAuthn: boolean;

  @Column({ name: 'attribute_mapping', type: 'jsonb' })
  attributeMapping: AttributeMapping;

  @Column({ name: 'auto_provision', type: 'boolean' })
  autoProvision: boolean;

  @Column({ name: 'default_role_id', type: 'uuid', nullable: true })
  defaultRoleId: string | null;

  @Column({ name: 'default_role_set_by', type: 'uuid', nullable: true })
  defaultRoleSetBy: string | null;

  @Column({ name: 'allowed_domains', type: 'varchar', length: 1000, nullable: true })
  allowedDomains: string | null;

  @Column({ name: 'enforce_sso', type: 'boolean' })
  enforceSSO: boolean;

  @Column({ name: 'trusts_idp_mfa', type: 'boolean' })
  trustsIdpMfa: boolean;

  /** Bumped by every configuration or status change (the repository's updates say so explicitly). */
  @Column({ type: 'integer' })
  generation: number;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy: string | null;
}
