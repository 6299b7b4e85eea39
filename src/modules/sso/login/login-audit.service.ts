import { Injectable } from '@nestjs/common';
import { TenantTransaction } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { asLinkRejection, LinkRejection, LoginRejection } from './sso-login.errors';

export interface AuditTenant {
  orgId: string | null;
  partnerId: string | null;
  providerId: string | null;
}

/**
 * Audit rows of the sign-in flows. A refusal carries its public code and the precise reason
 * (never IdP or library text); it is written in a transaction of its own when the work it
 * refused was rolled back.
 */
@Injectable()
export class LoginAudit {
  constructor(
    private readonly audit: AuditService,
    private readonly tx: TenantTransaction,
  ) {}

  /** Inside the caller's transaction. */
  async rejected(rejection: LoginRejection | LinkRejection, tenant: AuditTenant | null, purpose: 'login' | 'link'): Promise<void> {
    await this.audit.record({
      action: purpose === 'link' ? 'sso.link.rejected' : 'sso.login.rejected',
      orgId: tenant?.orgId ?? null,
      partnerId: tenant?.partnerId ?? null,
      resourceType: 'sso_provider',
      resourceId: tenant?.providerId ?? null,
      actor: { type: 'system', id: null },
      details: { code: purpose === 'link' ? asLinkRejection(rejection).code : rejection.code, reason: rejection.reason },
    });
  }

  /** In a transaction of its own, after the work was rolled back. */
  rejectedApart(rejection: LoginRejection | LinkRejection, tenant: AuditTenant | null, purpose: 'login' | 'link'): Promise<void> {
    return this.tx.withSystemContext('audit of a refused sign-in whose work was rolled back', () => this.rejected(rejection, tenant, purpose));
  }
}
