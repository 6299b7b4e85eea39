import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../infra/database/db.service';
import { ScimConnectionLookup, type ScimConnectionPrincipalRow } from '../auth/scim-connection-lookup';

// A SCIM connection with the state of the administrator whose authority it uses; one statement
// (one round trip on every SCIM request) that also marks the connection's last use.
const PRINCIPAL_SCIM_CONNECTION = prepared(
  'principal_scim_connection',
  `WITH c AS (
     UPDATE scim_connections SET last_used_at = now()
      WHERE token_hash = $1 AND revoked_at IS NULL
      RETURNING id, org_id, partner_id, acting_user_id)
   SELECT c.id, c.org_id, c.partner_id, c.acting_user_id, u.status AS acting_user_status
     FROM c LEFT JOIN users u ON u.id = c.acting_user_id`,
);

/** The scim module's side of principal resolution (see ScimConnectionLookup). System context only. */
@Injectable()
export class ScimConnectionLookupRepository extends ScimConnectionLookup {
  constructor(private readonly db: DbService) {
    super();
  }

  byTokenHash(tokenHash: string): Promise<ScimConnectionPrincipalRow | null> {
    return this.db.one(PRINCIPAL_SCIM_CONNECTION, [tokenHash]);
  }
}
