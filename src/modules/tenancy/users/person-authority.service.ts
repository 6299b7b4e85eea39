import { Injectable } from '@nestjs/common';
import { PersonChange, personOutOfReach, PersonTenant } from '../../../common/person-authority';
import { PersonAuthorityRepository } from './person-authority.repository';

/**
 * The one place that answers "may this person act on that person" (docs/security.md, "Acting on
 * a person"): every path that changes a person asks it — the users API, invitations, SCIM, group
 * mappings, identity-provider sign-in, API keys. The answer is the database's rule, so the
 * service's answer and the guard that backs every statement cannot disagree. The actor is always
 * a person: the signed-in user, an API key's creator, a SCIM connection's administrator, a
 * provider's configurer.
 */
@Injectable()
export class PersonAuthorityService {
  constructor(private readonly repo: PersonAuthorityRepository) {}

  mayActOn(actorId: string | null, targetId: string, change: PersonChange): Promise<boolean> {
    if (!actorId) return Promise.resolve(false);
    switch (change.kind) {
      case 'tenant':
        return this.repo.mayActOn(actorId, targetId, change.tenant);
      case 'identity':
        return this.repo.mayActOnIdentity(actorId, targetId);
      case 'email':
        return this.repo.mayChangeEmail(actorId, targetId, change.email);
      case 'grant':
        return this.repo.mayGrant(actorId, change.tenant, change.permissions, change.siteIds);
    }
  }

  /**
   * Whether the actor's account is active, and whether they may act on the target in the tenant, in
   * one question (null: the actor has no account), for callers that tell the two refusals apart.
   */
  standing(actorId: string, targetId: string, tenant: PersonTenant): Promise<{ active: boolean; covers: boolean } | null> {
    return this.repo.standing(actorId, targetId, tenant);
  }

  /** mayActOn, or 403 `person_out_of_reach`. */
  async requireMayActOn(actorId: string | null, targetId: string, change: PersonChange): Promise<void> {
    if (!(await this.mayActOn(actorId, targetId, change))) throw personOutOfReach();
  }
}
