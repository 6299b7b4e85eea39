import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { AccountProvisioningService } from '../tenancy/users/account-provisioning.service';
import { PersonAuthorityService } from '../tenancy/users/person-authority.service';
import { ScimContextService } from './scim-context.service';
import { ScimError } from './scim-error';
import { scimFilterToSql } from './scim-filter';
import { ScimGroupRepository } from './scim-group.repository';
import { readPatch, toBoolean } from './scim-patch.util';
import { int, LIST_SCHEMA, ListQuery, lookupCandidates, MAX_PAGE, projection, text, USER_FILTER_ATTRIBUTES, USER_SCHEMA, USER_VALUE_PATHS } from './scim-resource.util';
import { ConnectionScope, ScimUserRepository, ScimUserRow } from './scim-user.repository';
import { READ_ONLY, requireVersion, versioned } from './scim-version.util';

interface UserInput {
  /** The connection's own userName for the person. */
  userName?: string;
  /** The account's sign-in email (the primary of `emails`, or an email userName when no emails are sent). */
  email?: string;
  /** displayName / name.formatted. */
  name?: string;
  givenName?: string | null;
  familyName?: string | null;
  externalId?: string | null;
  active?: boolean;
}

/** One answer for every refused change of the sign-in email, whoever holds the address (no oracle). */
const EMAIL_CHANGE_REFUSED =
  "The sign-in email can be changed only for an account this organization owns (its only membership, on one of the organization's verified domains), to a free address on one of those domains";
const OUT_OF_REACH = 'The administrator this connection acts for has no authority over everything this person holds: every permission of their role and every site they reach';
const SUSPENDED_ELSEWHERE = 'This person was deprovisioned by another connection: only that connection may re-activate them';

const EMAIL = /^[^\s@"<>]{1,64}@[^\s@"<>]{1,189}\.[^\s@"<>]{1,63}$/;

/**
 * The Users of one SCIM connection (RFC 7643, 7644): the organization's members or the partner's
 * technicians. Requests run in the tenant transaction of the connection's principal;
 * deprovisioning switches to system context inside it.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly users: ScimUserRepository,
    private readonly groups: ScimGroupRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly accounts: AccountProvisioningService,
    private readonly authority: PersonAuthorityService,
    private readonly context: ScimContextService,
  ) {}

  private toUser(r: ScimUserRow): Record<string, unknown> {
    const name: Record<string, string> = { formatted: r.name };
    if (r.given_name !== null) name.givenName = r.given_name;
    if (r.family_name !== null) name.familyName = r.family_name;
    return versioned({
      schemas: [USER_SCHEMA],
      id: r.id,
      ...(r.external_id !== null ? { externalId: r.external_id } : {}),
      userName: r.user_name,
      name,
      displayName: r.name,
      emails: [{ value: r.email, type: 'work', primary: true }],
      active: r.active && r.user_status === 'active',
      meta: { resourceType: 'User', created: r.created_at.toISOString(), lastModified: r.updated_at.toISOString(), location: this.context.location('Users', r.id) },
    });
  }

  async listUsers(p: Principal, q: ListQuery): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    if (q.filter !== undefined && typeof q.filter !== 'string') throw ScimError.badRequest('invalidFilter', 'filter must be a single string');
    const filter = q.filter ? scimFilterToSql(q.filter, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS, 3) : null;
    const startIndex = int(q.startIndex, 'startIndex', 1, 1);
    const count = Math.min(int(q.count, 'count', 0, MAX_PAGE), MAX_PAGE);
    const { total, rows } = await this.users.list(scope, filter, startIndex - 1, count, q.filter ? lookupCandidates(q.filter as string) : undefined);
    const shape = projection(q);
    return { schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: rows.length, Resources: rows.map((r) => shape(this.toUser(r))) };
  }

  async getUser(p: Principal, id: string, q: ListQuery): Promise<Record<string, unknown>> {
    const row = await this.users.get(this.context.scopeOf(p), id);
    if (!row) throw ScimError.notFound('User not found');
    return projection(q)(this.toUser(row));
  }

  async createUser(p: Principal, body: unknown): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    const input = this.readUser(body, true);
    const userName = input.userName!;
    if (input.email === undefined) throw ScimError.badRequest('invalidValue', 'A work email (emails) is required when userName is not an email address');
    const email = input.email;
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    const facts = await this.users.provisioningFacts(scope, p.userId, email, userName, domain);
    if (facts.taken) throw ScimError.conflict('A user with this userName already exists');
    if (facts.deletedId) return this.restoreUser(p, scope, facts.deletedId, userName, input);
    // Spec 1.6.4 (identity first): a partner connection never creates technicians.
    if (!scope.orgId) throw ScimError.notFound('A partner connection only updates and deactivates existing technicians');
    const orgId = scope.orgId;
    const roleId = facts.defaultRoleId;
    if (!roleId) throw ScimError.badRequest('invalidValue', 'The connection has no default role: an administrator must set one before users can be created');
    // The delegation rule of JIT provisioning, re-checked now: the acting administrator must still be able to grant it, on every site.
    if (!facts.mayGrantDefaultRole) {
      throw new ScimError(403, 'The administrator this connection acts for can no longer grant its default role');
    }
    if (!facts.domainVerified) {
      throw ScimError.badRequest('invalidValue', "The address is not on a verified domain of the organization: provisioning needs the organization's DNS proof");
    }
    const userId = await this.tx.withSystemContext('SCIM provisioning creates or finds the account of a verified-domain address', async () => {
      const created = await this.accounts.createUser(email, input.name ?? '');
      if (created) return created;
      const existing = await this.users.userIdByEmail(email);
      if (!existing) throw ScimError.conflict('The address was taken concurrently');
      return existing.id;
    });
    await this.accounts.addOrgMember(orgId, userId, roleId);
    let row = await this.users.link(scope, userId, input.externalId ?? null, { userName, ...this.names(input) });
    if (input.active === false) {
      await this.deactivate(p, scope, userId);
      row = await this.users.get(scope, userId);
    }
    await this.audit.record({ action: 'scim.user.create', orgId, resourceType: 'user', resourceId: userId, details: { connectionId: scope.connectionId, roleId } });
    return this.toUser(row!);
  }

  /**
   * An IdP restores a user it deleted by POSTing it again (Entra ID does after a soft delete is
   * undone): the person comes back to this connection with what the POST says of them, and their
   * suspension, when this connection made it, is lifted unless the POST says `active: false`.
   */
  private async restoreUser(p: Principal, scope: ConnectionScope, userId: string, userName: string, input: UserInput): Promise<Record<string, unknown>> {
    await this.requireMayActOn(p, scope, userId);
    const linked = await this.users.link(scope, userId, input.externalId ?? null, { userName, ...this.names(input) });
    const reactivated = input.active !== false && (await this.accounts.reactivate(scope, userId, scope.connectionId));
    if (reactivated) this.context.forgetAfterCommit(userId);
    await this.audit.record({ action: 'scim.user.restore', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: userId, details: { connectionId: scope.connectionId } });
    // A reactivation changed the membership after the link read it.
    return this.toUser((reactivated ? await this.users.get(scope, userId) : linked)!);
  }

  async replaceUser(p: Principal, id: string, body: unknown, ifMatch?: string): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    const current = await this.users.get(scope, id);
    if (!current) throw ScimError.notFound('User not found');
    requireVersion(this.toUser(current), ifMatch);
    const input = this.readUser(body, true);
    return this.applyChanges(p, scope, current, {
      ...input,
      externalId: input.externalId ?? null,
      name: input.name ?? '',
      givenName: input.givenName ?? null,
      familyName: input.familyName ?? null,
    });
  }

  async patchUser(p: Principal, id: string, body: unknown, ifMatch?: string): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    const current = await this.users.get(scope, id);
    if (!current) throw ScimError.notFound('User not found');
    requireVersion(this.toUser(current), ifMatch);
    const change: UserInput = {};
    for (const op of readPatch(body)) {
      if (op.path === null) {
        if (op.op === 'remove' || !op.value || typeof op.value !== 'object' || Array.isArray(op.value)) throw ScimError.badRequest('invalidValue', 'A path-less operation carries an object of attributes');
        for (const [key, value] of Object.entries(op.value as Record<string, unknown>)) {
          // Clients send the resource's own id and schemas along (Okta does); only a different id is an attempt to change it.
          if ((key === 'id' && value === current.id) || key === 'schemas') continue;
          this.setAttribute(change, key, value, 'replace');
        }
      } else {
        this.setAttribute(change, op.path, op.value, op.op);
      }
    }
    return this.applyChanges(p, scope, current, change);
  }

  /**
   * Deprovisions the person and forgets them for this connection (RFC 7644 §3.6): from now on the
   * connection answers 404 for them and lists them nowhere; the account and the suspended
   * membership stay, so the audit history keeps its person, and a later POST of the same address
   * restores them.
   */
  async deleteUser(p: Principal, id: string, ifMatch?: string): Promise<void> {
    const scope = this.context.scopeOf(p);
    const current = await this.users.get(scope, id);
    if (!current) throw ScimError.notFound('User not found');
    requireVersion(this.toUser(current), ifMatch);
    await this.requireMayActOn(p, scope, id);
    await this.deactivate(p, scope, id);
    await this.groups.removeFromAll(scope.connectionId, id);
    await this.users.markDeleted(scope, id);
    await this.audit.record({ action: 'scim.user.delete', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: id, details: { connectionId: scope.connectionId } });
  }

  private setAttribute(change: UserInput, rawPath: string, value: unknown, op: 'add' | 'remove' | 'replace'): void {
    const path = rawPath.replace(/^urn:ietf:params:scim:schemas:core:2\.0:User:/i, '').toLowerCase();
    const remove = op === 'remove';
    if (READ_ONLY.test(path)) throw ScimError.badRequest('mutability', `${rawPath.slice(0, 40)} is read-only`);
    switch (path) {
      case 'active':
        if (remove) throw ScimError.badRequest('mutability', 'active cannot be removed');
        change.active = toBoolean(value, 'active');
        return;
      case 'username':
        if (remove) throw ScimError.badRequest('mutability', 'userName cannot be removed');
        change.userName = this.readUserName(value);
        return;
      case 'emails[type eq "work"].value':
      case 'emails':
        if (remove) throw ScimError.badRequest('mutability', 'The email cannot be removed');
        change.email = this.readEmail(path === 'emails' ? this.primaryEmail(value) : value);
        return;
      case 'displayname':
      case 'name.formatted':
        change.name = remove ? '' : text(value, rawPath);
        return;
      case 'name':
        if (remove) Object.assign(change, { name: '', givenName: null, familyName: null });
        else if (value && typeof value === 'object') Object.assign(change, this.nameParts(value as Record<string, unknown>));
        return;
      case 'name.givenname':
        change.givenName = remove ? null : text(value, rawPath);
        return;
      case 'name.familyname':
        change.familyName = remove ? null : text(value, rawPath);
        return;
      case 'externalid':
        change.externalId = remove ? null : text(value, 'externalId');
        return;
      default:
        // Attributes this service does not keep (title, phone numbers, the enterprise extension…) are accepted and ignored (RFC 7644 §3.5.2 lets a provider ignore unsupported attributes).
        if (!/^[a-z0-9:._\-[\]" ]{1,300}$/i.test(rawPath)) throw ScimError.badRequest('invalidPath', 'The path is not a valid attribute path');
    }
  }

  /**
   * Every change to a person goes through the rule of acting on a person: the administrator the
   * connection acts for must cover everything the person holds in the connection's tenant. What the
   * connection keeps of its own (userName, name parts, externalId) is stored per connection; the
   * account's sign-in email changes only where the organization owns the account, and the account's
   * name only where the administrator has authority over every tenant of the person.
   */
  private async applyChanges(p: Principal, scope: ConnectionScope, current: ScimUserRow, change: UserInput): Promise<Record<string, unknown>> {
    const emailChanges = change.email !== undefined && change.email !== current.email;
    const userNameChanges = change.userName !== undefined && change.userName !== current.user_name;
    const nameChanges =
      (change.name !== undefined && change.name !== current.name) ||
      (change.givenName !== undefined && change.givenName !== current.given_name) ||
      (change.familyName !== undefined && change.familyName !== current.family_name);
    const activeChanges = change.active !== undefined && change.active !== current.active;
    if (emailChanges || userNameChanges || nameChanges || activeChanges) await this.requireMayActOn(p, scope, current.id);
    if (emailChanges) {
      const email = change.email!;
      if (!(await this.authority.mayActOn(p.userId, current.id, { kind: 'email', email }))) throw new ScimError(403, EMAIL_CHANGE_REFUSED);
      const taken = await this.tx.withSystemContext('SCIM checks whether an address is held by another account', () => this.users.emailTakenByOther(current.id, email));
      if (taken) throw new ScimError(403, EMAIL_CHANGE_REFUSED);
    }
    if (userNameChanges && (await this.users.userNameTaken(scope, change.userName!, current.id))) throw ScimError.conflict('Another user of this connection has this userName');
    const profile = { userName: userNameChanges ? change.userName : undefined, ...(nameChanges ? this.names(change) : {}) };
    if (change.externalId !== undefined || !(await this.users.isLinked(scope, current.id))) await this.users.link(scope, current.id, change.externalId, profile);
    else await this.users.saveProfile(scope, current.id, profile);
    if (emailChanges) await this.accounts.updateProfile(current.id, change.email!, current.name);
    if (nameChanges && change.name !== undefined && (await this.authority.mayActOn(p.userId, current.id, { kind: 'identity' }))) {
      // The account's own name follows only where this administrator has authority over every tenant of the person.
      await this.accounts.updateName(current.id, change.name);
    }
    if (change.active === false && current.active) await this.deactivate(p, scope, current.id);
    if (change.active === true && !current.active) {
      const by = await this.accounts.suspendedBy(scope, current.id);
      if (by && by !== scope.connectionId) throw new ScimError(403, SUSPENDED_ELSEWHERE);
      await this.accounts.reactivate(scope, current.id, scope.connectionId);
      await this.users.link(scope, current.id, undefined);
      await this.audit.record({ action: 'scim.user.reactivate', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: current.id, details: { connectionId: scope.connectionId } });
      this.context.forgetAfterCommit(current.id);
    }
    const row = await this.users.get(scope, current.id);
    return this.toUser(row!);
  }

  private async requireMayActOn(p: Principal, scope: ConnectionScope, userId: string): Promise<void> {
    const tenant = scope.orgId ? { orgId: scope.orgId } : { partnerId: scope.partnerId! };
    if (!(await this.authority.mayActOn(p.userId, userId, { kind: 'tenant', tenant }))) throw new ScimError(403, OUT_OF_REACH);
  }

  /**
   * Deprovisioning, immediate and total, inside this request's transaction: tenancy suspends the
   * membership and ends (AccountProvisioningService.deprovision) every session, refresh token and
   * API key of the user in the connection's scope, every pending request they filed and every
   * elevation they approved that is still in its window (revoke_elevation queued for actuated
   * ones). The suspension records this connection, the only one that may lift it. The principal
   * cache forgets the user now and again once the answer has left (after the commit).
   */
  private async deactivate(p: Principal, scope: ConnectionScope, userId: string): Promise<void> {
    await this.requireMayActOn(p, scope, userId);
    const counts = await this.tx.withSystemContext('SCIM deprovisioning ends every credential and grant of a user in the connection scope', async () => {
      const ended = await this.accounts.deprovision(scope, userId, 'scim_deprovisioned');
      await this.accounts.recordSuspendingConnection(scope, userId, scope.connectionId);
      return ended;
    });
    // The resource changed (active): meta.lastModified says so (RFC 7643 §3.1).
    await this.users.link(scope, userId, undefined);
    const { sessionIds, ...details } = counts ?? { sessionIds: [] as string[] };
    await this.audit.record({ action: 'scim.user.deactivate', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: userId, details: { connectionId: scope.connectionId, ...details } });
    this.context.forgetSessions(sessionIds);
    this.context.forgetAfterCommit(userId);
  }

  private readUser(body: unknown, full: boolean): UserInput {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a User object');
    const b = body as Record<string, unknown>;
    if (!Array.isArray(b.schemas) || !b.schemas.includes(USER_SCHEMA)) throw ScimError.badRequest('invalidSyntax', `schemas must include ${USER_SCHEMA}`);
    const emailSource = b.emails !== undefined ? this.primaryEmail(b.emails) : undefined;
    if (full && (typeof b.userName !== 'string' || b.userName.length === 0)) throw ScimError.badRequest('invalidValue', 'userName is required');
    const userName = b.userName === undefined ? undefined : this.readUserName(b.userName);
    const email = emailSource !== undefined ? this.readEmail(emailSource) : userName !== undefined && EMAIL.test(userName) ? userName : undefined;
    const parts = b.name && typeof b.name === 'object' && !Array.isArray(b.name) ? this.nameParts(b.name as Record<string, unknown>) : {};
    const name = typeof b.displayName === 'string' ? text(b.displayName, 'displayName') : parts.name;
    return {
      userName,
      email,
      name,
      givenName: parts.givenName,
      familyName: parts.familyName,
      externalId: b.externalId === undefined || b.externalId === null ? undefined : text(b.externalId, 'externalId'),
      active: b.active === undefined ? undefined : toBoolean(b.active, 'active'),
    };
  }

  /** formatted, givenName and familyName of a `name` object; the display name from the parts when formatted is absent. */
  private nameParts(n: Record<string, unknown>): Pick<UserInput, 'name' | 'givenName' | 'familyName'> {
    const out: Pick<UserInput, 'name' | 'givenName' | 'familyName'> = {};
    if (n.givenName !== undefined) out.givenName = n.givenName === null ? null : text(n.givenName, 'name.givenName');
    if (n.familyName !== undefined) out.familyName = n.familyName === null ? null : text(n.familyName, 'name.familyName');
    if (typeof n.formatted === 'string') out.name = text(n.formatted, 'name.formatted');
    else if (out.givenName || out.familyName) out.name = this.joinedName(out);
    return out;
  }

  private joinedName(input: Pick<UserInput, 'givenName' | 'familyName'>): string | undefined {
    const parts = [input.givenName, input.familyName].filter((x): x is string => typeof x === 'string' && x.length > 0);
    return parts.length ? text(parts.join(' '), 'name') : undefined;
  }

  private names(input: UserInput): { displayName?: string; givenName?: string | null; familyName?: string | null } {
    return { displayName: input.name, givenName: input.givenName, familyName: input.familyName };
  }

  private primaryEmail(value: unknown): unknown {
    if (!Array.isArray(value) || value.length === 0 || value.length > 20) throw ScimError.badRequest('invalidValue', 'emails must be a non-empty array');
    const entries = value.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object');
    const pick = entries.find((e) => e.primary === true || e.primary === 'True' || e.primary === 'true') ?? entries.find((e) => e.type === 'work') ?? entries[0];
    return pick?.value;
  }

  private readEmail(value: unknown): string {
    if (typeof value !== 'string' || value.length > 255 || !EMAIL.test(value)) throw ScimError.badRequest('invalidValue', 'The email must be an email address of at most 255 characters');
    return value;
  }

  private readUserName(value: unknown): string {
    const name = text(value, 'userName');
    if (name.trim().length === 0) throw ScimError.badRequest('invalidValue', 'userName must not be empty');
    return name;
  }
}
