import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { PersonTenant } from '../../../common/person-authority';

/** The SQL rule of acting on a person (migration 1763701900000), one statement per question. */
@Injectable()
export class PersonAuthorityRepository {
  constructor(private readonly db: DbService) {}

  async mayActOn(actorId: string, targetId: string, tenant: PersonTenant): Promise<boolean> {
    const row = await this.db.one<{ ok: boolean }>(`SELECT app_may_act_on($1, $2, $3, $4) AS ok`, [actorId, targetId, tenant.orgId ?? null, tenant.orgId ? null : tenant.partnerId]);
    return row?.ok === true;
  }

  /** The actor's account status with the answer, in one statement (null: no such account). */
  async standing(actorId: string, targetId: string, tenant: PersonTenant): Promise<{ active: boolean; covers: boolean } | null> {
    const row = await this.db.one<{ status: string; covers: boolean }>(`SELECT status, app_may_act_on(id, $2, $3, $4) AS covers FROM users WHERE id = $1`, [
      actorId,
      targetId,
      tenant.orgId ?? null,
      tenant.orgId ? null : tenant.partnerId,
    ]);
    return row ? { active: row.status === 'active', covers: row.covers === true } : null;
  }

  async mayActOnIdentity(actorId: string, targetId: string): Promise<boolean> {
    return (await this.db.one<{ ok: boolean }>(`SELECT app_may_act_on_identity($1, $2) AS ok`, [actorId, targetId]))?.ok === true;
  }

  async mayChangeEmail(actorId: string, targetId: string, email: string): Promise<boolean> {
    return (await this.db.one<{ ok: boolean }>(`SELECT app_may_change_email($1, $2, $3) AS ok`, [actorId, targetId, email]))?.ok === true;
  }

  async mayGrant(actorId: string, tenant: PersonTenant, permissions: readonly string[], siteIds: readonly string[] | null): Promise<boolean> {
    const row = await this.db.one<{ ok: boolean }>(`SELECT app_may_grant($1, $2, $3, $4::text[], $5::uuid[]) AS ok`, [
      actorId,
      tenant.orgId ?? null,
      tenant.orgId ? null : tenant.partnerId,
      permissions,
      siteIds,
    ]);
    return row?.ok === true;
  }
}
