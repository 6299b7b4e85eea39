import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface ApiKeyRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  name: string;
  key_prefix: string;
  permissions: string[];
  mfa_satisfied: boolean;
  created_by: string | null;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

// Never the key hash.
const COLUMNS = `id, org_id, partner_id, name, key_prefix, permissions, mfa_satisfied, created_by, created_at, expires_at, revoked_at, last_used_at`;

@Injectable()
export class ApiKeyRepository {
  constructor(private readonly db: Db) {}

  list(orgId: string | undefined): Promise<ApiKeyRow[]> {
    return this.db.rows<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE ($1::uuid IS NULL OR org_id = $1) ORDER BY created_at DESC, id`, [orgId ?? null]);
  }

  find(id: string): Promise<ApiKeyRow | null> {
    return this.db.one<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
  }

  insert(k: {
    orgId: string | null;
    partnerId: string | null;
    name: string;
    prefix: string;
    keyHash: string;
    permissions: string[];
    mfaSatisfied: boolean;
    createdBy: string | null;
    expiresAt: string | null;
  }): Promise<ApiKeyRow | null> {
    return this.db.one<ApiKeyRow>(
      `INSERT INTO api_keys (org_id, partner_id, name, key_prefix, key_hash, permissions, mfa_satisfied, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [k.orgId, k.partnerId, k.name, k.prefix, k.keyHash, k.permissions, k.mfaSatisfied, k.createdBy, k.expiresAt],
    );
  }

  /** Idempotent: a revoked key keeps its first revocation time. */
  revoke(id: string): Promise<ApiKeyRow | null> {
    return this.db.one<ApiKeyRow>(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`, [id]);
  }
}
