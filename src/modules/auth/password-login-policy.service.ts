import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';

/**
 * Whether a user may use a password at all (spec 1.4): not when an active provider that governs
 * them enforces SSO. Organization users are governed by their organizations' providers,
 * technicians by their partner's. Runs in the caller's (system) context.
 */
@Injectable()
export class PasswordLoginPolicyService {
  constructor(private readonly db: DbService) {}

  async isSsoEnforced(userId: string): Promise<boolean> {
    const row = await this.db.one<{ enforced: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM sso_providers p JOIN organization_memberships m ON m.org_id = p.org_id
          WHERE m.user_id = $1 AND p.status = 'active' AND p.enforce_sso
         UNION ALL
         SELECT 1 FROM sso_providers p JOIN partner_memberships pm ON pm.partner_id = p.partner_id
          WHERE pm.user_id = $1 AND p.status = 'active' AND p.enforce_sso
       ) AS enforced`,
      [userId],
    );
    return row?.enforced ?? false;
  }
}
