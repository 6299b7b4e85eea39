import { Foundation1763700000000 } from './1763700000000-foundation';
import { SsoProviders1763700200000 } from './1763700200000-sso-providers';
import { TenancyContent1763700400000 } from './1763700400000-tenancy-content';
import { Imports1763700410000 } from './1763700410000-imports';
import { PartnerLoginBranding1763700600000 } from './1763700600000-partner-login-branding';
import { SsoLogin1763700280000 } from './1763700280000-sso-login';
import { SamlSp1763700250000 } from './1763700250000-saml-sp';
import { PamControlPlane1763700300000 } from './1763700300000-pam-control-plane';
import { PamLifecycle1763700530000 } from './1763700530000-pam-lifecycle';
import { PamRequestListIndexes1763700540000 } from './1763700540000-pam-request-list-indexes';
import { PamIngest1763700500000 } from './1763700500000-pam-ingest';
import { PartnerWideWrites1763700730000 } from './1763700730000-partner-wide-writes';
import { NoSelfApproval1763700740000 } from './1763700740000-no-self-approval';
import { PartnerWideReads1763700810000 } from './1763700810000-partner-wide-reads';
import { AuthHardening1763700710000 } from './1763700710000-auth-hardening';
import { InvitationsAndSelfApproval1763700720000 } from './1763700720000-invitations-and-self-approval';
import { SsoHardening1763700700000 } from './1763700700000-sso-hardening';
import { PooledHotPaths1763700800000 } from './1763700800000-pooled-hot-paths';
import { ScimProvisioning1763700930000 } from './1763700930000-scim-provisioning';
import { OidcIssParameter1763700940000 } from './1763700940000-oidc-iss-parameter';
import { SsoSignOut1763700941000 } from './1763700941000-sso-sign-out';
import { ApprovalFanOutSuspended1763700970000 } from './1763700970000-approval-fan-out-suspended';
import { PamRequestCounts1763700960000 } from './1763700960000-pam-request-counts';
import { SamlSpKeysAndLogout1763700942000 } from './1763700942000-saml-sp-keys-and-logout';
import { SiteScope1763700950000 } from './1763700950000-site-scope';
import { AgentCommandsTake1763700951000 } from './1763700951000-agent-commands-take';
import { PamEndElevations1763701500000 } from './1763701500000-pam-end-elevations';
import { SamlSpPartnerWide1763700952000 } from './1763700952000-saml-sp-partner-wide';
import { PamRequestListSiteScope1763700961000 } from './1763700961000-pam-request-list-site-scope';
import { WriteCredentialCheck1763700971000 } from './1763700971000-write-credential-check';
import { FanOutRequestLookup1763701600000 } from './1763701600000-fan-out-request-lookup';
import { PoliciesReadScopeOnce1763701700000 } from './1763701700000-policies-read-scope-once';
import { AuditWriteOrder1763701800000 } from './1763701800000-audit-write-order';
import { ActingOnAPerson1763701900000 } from './1763701900000-acting-on-a-person';
import { ScimConformance1763702000000 } from './1763702000000-scim-conformance';
import { PersonRulePlans1763702100000 } from './1763702100000-person-rule-plans';
import { AgentCommandChannel1763702200000 } from './1763702200000-agent-command-channel';
import { PrincipalChangeNotifications1763702400000 } from './1763702400000-principal-change-notifications';
import { ImportPhaseItems1763702300000 } from './1763702300000-import-phase-items';
import { WarmConnections1763702600000 } from './1763702600000-warm-connections';
import { AuditExportOrder1763702700000 } from './1763702700000-audit-export-order';
import { Webhooks1763702800000 } from './1763702800000-webhooks';
import { AgentCommandsTakeMany1763702900000 } from './1763702900000-agent-commands-take-many';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list runs under
 * ts-jest, ts-node and the compiled build. Append new migrations at the end.
 */
export const migrations = [Foundation1763700000000, SsoProviders1763700200000, TenancyContent1763700400000, Imports1763700410000, PartnerLoginBranding1763700600000, SsoLogin1763700280000, PamControlPlane1763700300000, PamLifecycle1763700530000, SamlSp1763700250000, PamIngest1763700500000, PamRequestListIndexes1763700540000, PartnerWideWrites1763700730000, AuthHardening1763700710000, InvitationsAndSelfApproval1763700720000, SsoHardening1763700700000, NoSelfApproval1763700740000, PooledHotPaths1763700800000, PartnerWideReads1763700810000, ScimProvisioning1763700930000, OidcIssParameter1763700940000, SsoSignOut1763700941000, ApprovalFanOutSuspended1763700970000, PamRequestCounts1763700960000, SamlSpKeysAndLogout1763700942000, SiteScope1763700950000, PamRequestListSiteScope1763700961000, WriteCredentialCheck1763700971000, AgentCommandsTake1763700951000, SamlSpPartnerWide1763700952000, PamEndElevations1763701500000, FanOutRequestLookup1763701600000, PoliciesReadScopeOnce1763701700000, AuditWriteOrder1763701800000, ActingOnAPerson1763701900000, ScimConformance1763702000000, PersonRulePlans1763702100000, AgentCommandChannel1763702200000, ImportPhaseItems1763702300000, PrincipalChangeNotifications1763702400000, WarmConnections1763702600000, AuditExportOrder1763702700000, Webhooks1763702800000, AgentCommandsTakeMany1763702900000];
