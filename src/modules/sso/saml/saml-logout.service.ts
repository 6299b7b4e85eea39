import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { inflateRawSync } from 'node:zlib';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { ownerOf } from '../login/login-provider.util';
import { safeRedirectPath } from '../login/redirect-path.util';
import { LoginSessionService } from '../sign-in/login-session.service';
import type { SessionLinkRow } from '../login/sso-sign-out.repository';
import { SsoIdpLogoutService } from '../login/sso-idp-logout.service';
import { SamlLogoutStarter, SsoLogoutService } from '../login/sso-logout.service';
import { isAcceptableBrowserUrl } from '../providers/provider-config.util';
import { samlSettings, SamlSettings } from './saml-provider.util';
import { SamlRequestCacheService } from './saml-request-cache.service';
import { SAML_CLOCK_SKEW_MS, SamlSpService, SamlValidationError } from './saml-sp.service';
import { SamlSpKeysService } from './saml-sp-keys.service';
import { SamlSpKeysRepository } from './saml-sp-keys.repository';
import type { SamlTenant } from './saml.repository';
import { SamlRepository } from './saml.repository';
import { SamlXmlError } from './xml/saml-xml.errors';
import { firstChildElement, parseSamlXml, SAML_NS } from './xml/saml-xml.util';

/** The HTTP-Redirect binding's RelayState limit (80 bytes): a longer return path becomes /login. */
const MAX_RELAY_STATE = 80;
/** A deflated logout message is a few hundred bytes; this bounds the inflation too. */
const MAX_MESSAGE_LENGTH = 16_384;
const MAX_INFLATED_BYTES = 65_536;
/** Query-signature algorithms accepted (the binding's SigAlg); SHA-1 is not. */
const ACCEPTED_SIG_ALGS = new Set(['http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512']);
/** A logout message travels with the browser at once: one issued longer ago than this (or later, past the skew) is refused. */
const MAX_MESSAGE_AGE_MS = 5 * 60_000;
/** Longest LogoutRequest ID remembered against replay (the column holds 256 characters with its prefix). */
const MAX_REQUEST_ID_LENGTH = 200;

export const SLO_FAILURE_LOCATION = '/login?error=sso_error';

/**
 * SAML 2.0 Single Logout over HTTP-Redirect, through node-saml, at `/sso/saml/slo/:providerId`.
 * SP-initiated: the user signs out here (SsoLogoutService.logout), the browser carries our signed
 * LogoutRequest to the IdP, and the IdP's signed LogoutResponse comes back here. IdP-initiated: the
 * IdP's signed LogoutRequest ends the sessions of that NameID (and SessionIndex) at this provider,
 * and the browser goes back with our signed LogoutResponse. Every message must be signed (node-saml
 * lets an unsigned redirect message through), parse strictly with no comment, and name the IdP as
 * Issuer and this endpoint as Destination.
 */
@Injectable()
export class SamlLogoutService implements OnModuleInit, SamlLogoutStarter {
  private readonly logger = new Logger(SamlLogoutService.name);

  constructor(
    private readonly logouts: SsoLogoutService,
    private readonly idpLogouts: SsoIdpLogoutService,
    private readonly loginSessions: LoginSessionService,
    private readonly repo: SamlRepository,
    private readonly keysRepo: SamlSpKeysRepository,
    private readonly keys: SamlSpKeysService,
    private readonly sp: SamlSpService,
    private readonly cache: SamlRequestCacheService,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.logouts.useSamlLogout(this);
  }

  /** SP-initiated: the IdP's Single Logout URL with our signed LogoutRequest, or null without one configured. */
  async logoutUrl(link: SessionLinkRow, returnPath: string): Promise<string | null> {
    const tenant = { orgId: link.org_id, partnerId: link.partner_id, providerId: link.provider_id };
    const found = await this.configured(tenant.providerId);
    if (!found) return null;
    const key = await this.keys.current(tenant);
    const relayState = Buffer.byteLength(returnPath) <= MAX_RELAY_STATE ? returnPath : '/login';
    return this.sp.logoutRequestUrl(
      tenant.providerId,
      found.settings,
      found.sloUrl,
      this.cache.forProvider(tenant),
      key.privateKeyPem,
      { nameId: link.subject, nameIdFormat: link.name_id_format, sessionIndex: link.idp_session_id },
      relayState,
    );
  }

  /** GET /sso/saml/slo/:providerId: where the browser goes next (always a redirect). */
  async handle(providerId: string, query: Record<string, unknown>, rawQuery: string): Promise<string> {
    const provider = await this.tx.withSystemContext('a SAML logout message names its provider', () => this.loginSessions.provider(providerId));
    if (!provider || provider.type !== 'saml') return this.refuse(null, 'provider_unknown');
    const tenant: SamlTenant = { ...ownerOf(provider), providerId };
    try {
      return await this.process(tenant, query, rawQuery);
    } catch (error) {
      if (error instanceof SamlValidationError) return this.refuse(tenant, error.reason);
      throw error;
    }
  }

  private async process(tenant: SamlTenant, query: Record<string, unknown>, rawQuery: string): Promise<string> {
    const found = await this.configured(tenant.providerId);
    if (!found) throw new SamlValidationError('logout_not_configured');
    const strings = Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const kind = typeof query.SAMLRequest === 'string' ? 'request' : typeof query.SAMLResponse === 'string' ? 'response' : null;
    if (!kind || (query.SAMLRequest !== undefined && query.SAMLResponse !== undefined)) throw new SamlValidationError('logout_message_missing');
    if (Object.values(query).some((v) => typeof v !== 'string')) throw new SamlValidationError('logout_parameter_repeated');
    if (typeof query.Signature !== 'string' || typeof query.SigAlg !== 'string') throw new SamlValidationError('logout_unsigned');
    if (!ACCEPTED_SIG_ALGS.has(query.SigAlg)) throw new SamlValidationError('logout_signature_algorithm_unsupported');
    const inResponseTo = this.checkEnvelope(kind === 'request' ? strings.SAMLRequest : strings.SAMLResponse, kind, found.settings, this.sp.sloUrl(tenant.providerId));

    const cache = this.cache.forProvider(tenant);
    const message = await this.sp.validateLogoutRedirect(tenant.providerId, found.settings, cache, strings, rawQuery);
    if (message.kind === 'response') {
      // node-saml reads the request id but leaves it in the cache: used up here, once (a concurrent replay gets null).
      if ((await cache.removeAsync(inResponseTo)) === null) throw new SamlValidationError('logout_in_response_to_invalid');
      await this.record(tenant, 'sso.logout.idp_confirmed', {});
      return safeRedirectPath(strings.RelayState ?? '/login');
    }
    // A signed LogoutRequest works once: replayed, it could end the person's later sessions of that NameID.
    if (message.id.length > MAX_REQUEST_ID_LENGTH) throw new SamlValidationError('logout_request_id_too_long');
    const fresh = await this.tx.withSystemContext('an IdP LogoutRequest is used once', async () => {
      await this.repo.sweepConsumedAssertions();
      return this.repo.consumeAssertion(tenant, `logout-request:${message.id}`, new Date(Date.now() + MAX_MESSAGE_AGE_MS + 2 * SAML_CLOCK_SKEW_MS));
    });
    if (!fresh) throw new SamlValidationError('logout_request_replayed');
    const sessionsEnded = await this.idpLogouts.endNamedSessions(
      { providerId: tenant.providerId, subject: message.nameId, idpSessionId: message.sessionIndex },
      tenant,
      'saml_idp_logout',
    );
    const key = await this.keys.current(tenant);
    this.logger.log({ providerId: tenant.providerId, sessionsEnded }, 'IdP-initiated SAML logout');
    return this.sp.logoutResponseUrl(tenant.providerId, found.settings, found.sloUrl, cache, key.privateKeyPem, message.id, strings.RelayState ?? null, true);
  }

  /**
   * What node-saml does not check: a strict parse (no DOCTYPE, no comment anywhere), the root
   * element of the binding's parameter, Destination equal to this endpoint, Issuer equal to the
   * IdP, and for a response an InResponseTo (node-saml checks it only when present).
   */
  private checkEnvelope(encoded: string, kind: 'request' | 'response', settings: SamlSettings, destination: string): string | null {
    if (encoded.length > MAX_MESSAGE_LENGTH) throw new SamlValidationError('logout_message_too_large');
    let xml: string;
    try {
      xml = inflateRawSync(Buffer.from(encoded, 'base64'), { maxOutputLength: MAX_INFLATED_BYTES }).toString('utf8');
    } catch {
      throw new SamlValidationError('logout_message_not_deflated');
    }
    if (xml.includes('<!--')) throw new SamlValidationError('logout_xml_comment');
    let root;
    try {
      root = parseSamlXml(xml).documentElement!;
    } catch (error) {
      if (error instanceof SamlXmlError) throw new SamlValidationError(`logout_${error.code}`);
      throw error;
    }
    const expected = kind === 'request' ? 'LogoutRequest' : 'LogoutResponse';
    if (root.namespaceURI !== SAML_NS.protocol || root.localName !== expected) throw new SamlValidationError('logout_message_kind_mismatch');
    if (root.getAttribute('Destination') !== destination) throw new SamlValidationError('logout_destination_mismatch');
    const issued = Date.parse(root.getAttribute('IssueInstant') ?? '');
    if (Number.isNaN(issued) || issued > Date.now() + SAML_CLOCK_SKEW_MS || issued < Date.now() - MAX_MESSAGE_AGE_MS - SAML_CLOCK_SKEW_MS) {
      throw new SamlValidationError('logout_issue_instant_invalid');
    }
    const issuer = firstChildElement(root, SAML_NS.assertion, 'Issuer');
    if (!issuer || issuer.textContent?.trim() !== settings.entityId) throw new SamlValidationError('logout_issuer_mismatch');
    const inResponseTo = root.getAttribute('InResponseTo') || null;
    if (kind === 'response' && !inResponseTo) throw new SamlValidationError('logout_in_response_to_missing');
    return inResponseTo;
  }

  /** The provider's SAML settings and its IdP Single Logout URL, when both are complete and acceptable. */
  private async configured(providerId: string): Promise<{ settings: SamlSettings; sloUrl: string } | null> {
    // One statement after the other: a transaction's statements run in order on its one connection.
    const { columns, settings } = await this.tx.withSystemContext('SAML single logout reads its provider settings', async () => ({
      columns: await this.repo.samlColumns(providerId),
      settings: await this.keysRepo.signInSettings(providerId),
    }));
    const configured = columns && samlSettings(columns);
    const sloUrl = settings?.idpSloUrl;
    if (!configured || 'missing' in configured || !sloUrl) return null;
    if (!isAcceptableBrowserUrl(sloUrl, this.config.ssoAllowInsecureLoopbackIdp && !this.config.isProduction)) return null;
    return { settings: configured.settings, sloUrl };
  }

  private async refuse(tenant: SamlTenant | null, reason: string): Promise<string> {
    await this.record(tenant, 'sso.logout.rejected', { reason });
    return SLO_FAILURE_LOCATION;
  }

  private record(tenant: SamlTenant | null, action: string, details: Record<string, unknown>): Promise<void> {
    return this.tx.withSystemContext('audit of a SAML logout message', () =>
      this.audit.record({
        action,
        orgId: tenant?.orgId ?? null,
        partnerId: tenant?.partnerId ?? null,
        resourceType: 'sso_provider',
        resourceId: tenant?.providerId ?? null,
        actor: { type: 'system', id: null },
        details,
      }),
    );
  }
}
