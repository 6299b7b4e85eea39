import { AppException } from './errors/app.exception';

/**
 * Acting on a person (docs/security.md): whoever changes a person — their identity, their
 * memberships and roles in a tenant, the credentials they hold, the identity providers that sign
 * them in — must hold authority over everything that person holds there. The rule itself is SQL
 * (migration 1763701900000: app_may_act_on and its siblings), asked by PersonAuthorityService
 * before a change and by the database's guard on every statement that changes a person.
 */
export const PERSON_OUT_OF_REACH = 'person_out_of_reach';
export const PERSON_OUT_OF_REACH_MESSAGE = 'Acting on this person needs authority over everything they hold: every permission of their role, every organization and site they reach';

/** The tenant a change happens in: an organization or a partner. */
export type PersonTenant = { orgId: string; partnerId?: null } | { orgId?: null; partnerId: string };

/**
 * What is being done to the person:
 * - `tenant`: their membership, role, sites or suspension in one tenant, or a credential they hold there;
 * - `identity`: their global account (name, password, MFA, account status), which every tenant they belong to shares;
 * - `email`: their sign-in address, which only the person or the one organization owning the account may change;
 * - `grant`: handing out a role's permissions on these sites (null: every site) in a tenant.
 */
export type PersonChange =
  | { kind: 'tenant'; tenant: PersonTenant }
  | { kind: 'identity' }
  | { kind: 'email'; email: string }
  | { kind: 'grant'; tenant: PersonTenant; permissions: readonly string[]; siteIds: readonly string[] | null };

export function personOutOfReach(): AppException {
  return AppException.forbidden(PERSON_OUT_OF_REACH, PERSON_OUT_OF_REACH_MESSAGE);
}
