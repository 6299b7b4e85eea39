import { Inject, Injectable } from '@nestjs/common';
import { REQUEST_KEY, RequestContext } from '../../infra/context/request-context';
import type { Request } from 'express';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { DbService } from '../../infra/database/db.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { PrincipalResolverService } from '../auth/principal-resolver.service';
import { GroupRoleApplier } from './group-role.applier';
import { ScimError } from './scim-error';
import { READ_ONLY, requireVersion, versioned } from './scim-version.util';
import { AttributeTable, scimFilterToSql, ValuePathTable } from './scim-filter';
import { memberFilterValue, readPatch, toBoolean } from './scim-patch.util';
import { Candidates, ConnectionScope, ScimUserRepository, ScimUserRow } from './scim-user.repository';
import { AccountProvisioningService } from '../tenancy/users/account-provisioning.service';
import { PersonAuthorityService } from '../tenancy/users/person-authority.service';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const MAX_PAGE = 100;

/** What a Users filter may name, each mapped to a fixed column of the Users query. */
export const USER_FILTER_ATTRIBUTES: AttributeTable = {
  id: { sql: 'x.id::text', kind: 'string', caseExact: true },
  username: { sql: 'x.user_name', kind: 'string', caseExact: false },
  externalid: { sql: 'x.external_id', kind: 'string', caseExact: true },
  'emails.value': { sql: 'x.email', kind: 'string', caseExact: false },
  emails: { sql: 'x.email', kind: 'string', caseExact: false },
  displayname: { sql: 'x.name', kind: 'string', caseExact: false },
  'name.formatted': { sql: 'x.name', kind: 'string', caseExact: false },
  'name.givenname': { sql: 'x.given_name', kind: 'string', caseExact: false },
  'name.familyname': { sql: 'x.family_name', kind: 'string', caseExact: false },
  active: { sql: 'x.active', kind: 'boolean', caseExact: true },
  'meta.created': { sql: 'x.created_at', kind: 'datetime', caseExact: true },
  'meta.lastmodified': { sql: 'x.updated_at', kind: 'datetime', caseExact: true },
};

/** Every user has one email, of type "work", primary. */
export const USER_VALUE_PATHS: ValuePathTable = {
  emails: {
    value: { sql: 'x.email', kind: 'string', caseExact: false },
    type: { sql: `'work'::text`, kind: 'string', caseExact: false },
    primary: { sql: 'true', kind: 'boolean', caseExact: true },
  },
};

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

interface ListQuery {
  filter?: unknown;
  startIndex?: unknown;
  count?: unknown;
  attributes?: unknown;
  excludedAttributes?: unknown;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@"<>]{1,64}@[^\s@"<>]{1,189}\.[^\s@"<>]{1,63}$/;

function int(value: unknown, name: string, min: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string' || !/^-?\d{1,9}$/.test(value)) throw ScimError.badRequest('invalidValue', `${name} must be an integer`);
  return Math.max(min, Number(value));
}

function text(value: unknown, field: string, max = 255): string {
  if (typeof value !== 'string' || value.length > max || /[\u0000-\u001f]/.test(value)) throw ScimError.badRequest('invalidValue', `${field} must be a string of at most ${max} characters`);
  return value;
}

/**
 * The SCIM service provider of one connection (RFC 7643, 7644): Users and Groups of the
 * connection's organization or partner. Requests run in the tenant transaction of the connection's
 * principal; deprovisioning and group application switch to system context inside it.
 */
@Injectable()
export class ScimService {
  constructor(
    private readonly users: ScimUserRepository,
    private readonly db: DbService,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly resolver: PrincipalResolverService,
    private readonly applier: GroupRoleApplier,
    private readonly accounts: AccountProvisioningService,
    private readonly authority: PersonAuthorityService,
    private readonly cls: RequestContext,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  scopeOf(p: Principal): ConnectionScope {
    if (p.kind !== 'scim' || !p.scimConnectionId) throw new ScimError(401, 'A SCIM token is required');
    return { connectionId: p.scimConnectionId, orgId: p.scope === 'organization' ? p.orgId : null, partnerId: p.partnerId };
  }

  /** The SCIM base URL (`<PUBLIC_URL>/api/v1/scim/v2`): every `meta.location` starts with it. */
  baseUrl(): string {
    return `${this.config.publicUrl}/api/v1/scim/v2`;
  }

  location(kind: 'Users' | 'Groups', id: string): string {
    return `${this.baseUrl()}/${kind}/${id}`;
  }

  toUser(r: ScimUserRow): Record<string, unknown> {
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
      meta: { resourceType: 'User', created: r.created_at.toISOString(), lastModified: r.updated_at.toISOString(), location: this.location('Users', r.id) },
    });
  }

  async listUsers(p: Principal, q: ListQuery): Promise<Record<string, unknown>> {
    const scope = this.scopeOf(p);
    if (q.filter !== undefined && typeof q.filter !== 'string') throw ScimError.badRequest('invalidFilter', 'filter must be a single string');
    const filter = q.filter ? scimFilterToSql(q.filter, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS, 3) : null;
    const startIndex = int(q.startIndex, 'startIndex', 1, 1);
    const count = Math.min(int(q.count, 'count', 0, MAX_PAGE), MAX_PAGE);
    const { total, rows } = await this.users.list(scope, filter, startIndex - 1, count, q.filter ? lookupCandidates(q.filter as string) : undefined);
    const shape = projection(q);
    return { schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: rows.length, Resources: rows.map((r) => shape(this.toUser(r))) };
  }

  async getUser(p: Principal, id: string, q: ListQuery): Promise<Record<string, unknown>> {
    const row = await this.users.get(this.scopeOf(p), id);
    if (!row) throw ScimError.notFound('User not found');
    return projection(q)(this.toUser(row));
  }

  async createUser(p: Principal, body: unknown): Promise<Record<string, unknown>> {
    const scope = this.scopeOf(p);
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
    if (reactivated) this.forgetAfterCommit(userId);
    await this.audit.record({ action: 'scim.user.restore', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: userId, details: { connectionId: scope.connectionId } });
    // A reactivation changed the membership after the link read it.
    return this.toUser((reactivated ? await this.users.get(scope, userId) : linked)!);
  }

  async replaceUser(p: Principal, id: string, body: unknown, ifMatch?: string): Promise<Record<string, unknown>> {
    const scope = this.scopeOf(p);
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
    const scope = this.scopeOf(p);
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
    const scope = this.scopeOf(p);
    const current = await this.users.get(scope, id);
    if (!current) throw ScimError.notFound('User not found');
    requireVersion(this.toUser(current), ifMatch);
    await this.requireMayActOn(p, scope, id);
    await this.deactivate(p, scope, id);
    await this.db.exec(`DELETE FROM scim_group_members WHERE connection_id = $1 AND user_id = $2`, [scope.connectionId, id]);
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
    if (change.externalId !== undefined || !(await this.linked(scope, current.id))) await this.users.link(scope, current.id, change.externalId, profile);
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
      this.forgetAfterCommit(current.id);
    }
    const row = await this.users.get(scope, current.id);
    return this.toUser(row!);
  }

  private async requireMayActOn(p: Principal, scope: ConnectionScope, userId: string): Promise<void> {
    const tenant = scope.orgId ? { orgId: scope.orgId } : { partnerId: scope.partnerId! };
    if (!(await this.authority.mayActOn(p.userId, userId, { kind: 'tenant', tenant }))) throw new ScimError(403, OUT_OF_REACH);
  }

  private async linked(scope: ConnectionScope, userId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM scim_users WHERE connection_id = $1 AND user_id = $2`, [scope.connectionId, userId])) !== null;
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
    for (const sid of sessionIds) this.resolver.forgetSession(sid);
    this.forgetAfterCommit(userId);
  }

  private forgetAfterCommit(userId: string): void {
    this.resolver.forgetUser(userId);
    const res = this.cls.isActive() ? this.cls.get<Request | undefined>(REQUEST_KEY)?.res : undefined;
    res?.once('finish', () => this.resolver.forgetUser(userId));
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

  // ---- Groups -------------------------------------------------------------------------------

  private async groupRow(scope: ConnectionScope, id: string): Promise<{ id: string; display_name: string; external_id: string | null; created_at: Date; updated_at: Date } | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    return this.db.one(`SELECT id, display_name, external_id, created_at, updated_at FROM scim_groups WHERE id = $1 AND connection_id = $2`, [id, scope.connectionId]);
  }

  private async toGroup(scope: ConnectionScope, g: { id: string; display_name: string; external_id: string | null; created_at: Date; updated_at: Date }, withMembers = true): Promise<Record<string, unknown>> {
    const members = withMembers
      ? await this.db.rows<{ user_id: string; email: string }>(`SELECT m.user_id, u.email FROM scim_group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = $1 ORDER BY u.email`, [g.id])
      : [];
    return versioned({
      schemas: [GROUP_SCHEMA],
      id: g.id,
      ...(g.external_id !== null ? { externalId: g.external_id } : {}),
      displayName: g.display_name,
      ...(withMembers ? { members: members.map((m) => ({ value: m.user_id, display: m.email, $ref: this.location('Users', m.user_id) })) } : {}),
      meta: { resourceType: 'Group', created: g.created_at.toISOString(), lastModified: g.updated_at.toISOString(), location: this.location('Groups', g.id) },
    });
  }

  async listGroups(p: Principal, q: ListQuery): Promise<Record<string, unknown>> {
    const scope = this.scopeOf(p);
    if (q.filter !== undefined && typeof q.filter !== 'string') throw ScimError.badRequest('invalidFilter', 'filter must be a single string');
    const filter = q.filter
      ? scimFilterToSql(q.filter, { displayname: { sql: 'display_name', kind: 'string', caseExact: false }, externalid: { sql: 'external_id', kind: 'string', caseExact: true }, id: { sql: 'id::text', kind: 'string', caseExact: true } }, {}, 2)
      : null;
    const startIndex = int(q.startIndex, 'startIndex', 1, 1);
    const count = Math.min(int(q.count, 'count', 0, MAX_PAGE), MAX_PAGE);
    const params = [scope.connectionId, ...(filter?.params ?? [])];
    const rows = await this.db.rows<{ id: string; display_name: string; external_id: string | null; created_at: Date; updated_at: Date; total: string }>(
      `SELECT *, count(*) OVER () AS total FROM scim_groups WHERE connection_id = $1 ${filter ? `AND ${filter.sql}` : ''} ORDER BY created_at, id OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
      [...params, startIndex - 1, count],
    );
    const excluded = typeof q.excludedAttributes === 'string' && /(^|,)\s*members\s*(,|$)/i.test(q.excludedAttributes);
    const shape = projection(q);
    const resources = [];
    for (const r of rows) resources.push(shape(await this.toGroup(scope, r, !excluded)));
    let total = rows.length ? Number(rows[0].total) : 0;
    if (!rows.length && (startIndex > 1 || count === 0)) {
      total = Number((await this.db.one<{ c: string }>(`SELECT count(*) AS c FROM scim_groups WHERE connection_id = $1 ${filter ? `AND ${filter.sql}` : ''}`, params))?.c ?? 0);
    }
    return { schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: rows.length, Resources: resources };
  }

  async getGroup(p: Principal, id: string, q: ListQuery): Promise<Record<string, unknown>> {
    const scope = this.scopeOf(p);
    const g = await this.groupRow(scope, id);
    if (!g) throw ScimError.notFound('Group not found');
    return projection(q)(await this.toGroup(scope, g));
  }

  async createGroup(p: Principal, body: unknown): Promise<Record<string, unknown>> {
    const scope = this.scopeOf(p);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a Group object');
    const b = body as Record<string, unknown>;
    if (!Array.isArray(b.schemas) || !b.schemas.includes(GROUP_SCHEMA)) throw ScimError.badRequest('invalidSyntax', `schemas must include ${GROUP_SCHEMA}`);
    const displayName = text(b.displayName, 'displayName');
    if (!displayName) throw ScimError.badRequest('invalidValue', 'displayName is required');
    const exists = await this.db.one(`SELECT 1 FROM scim_groups WHERE connection_id = $1 AND lower(display_name) = lower($2)`, [scope.connectionId, displayName]);
    if (exists) throw ScimError.conflict('A group with this displayName already exists');
    const g = await this.db.one<{ id: string; display_name: string; external_id: string | null; created_at: Date; updated_at: Date }>(
      `INSERT INTO scim_groups (connection_id, org_id, partner_id, display_name, external_id) VALUES ($1, $2, $3, $4, $5) RETURNING id, display_name, external_id, created_at, updated_at`,
      [scope.connectionId, scope.orgId, scope.orgId ? null : scope.partnerId, displayName, b.externalId === undefined || b.externalId === null ? null : text(b.externalId, 'externalId')],
    );
    const members = Array.isArray(b.members) ? b.members.map((m) => this.memberId(m)) : [];
    await this.changeMembers(p, scope, g!.id, members, []);
    return this.toGroup(scope, (await this.groupRow(scope, g!.id))!);
  }

  /**
   * RFC 7644 §3.5.2: answered 204 without a body (what Entra ID advises for large membership
   * changes), or, when the request names `attributes` or `excludedAttributes`, 200 with the group
   * so projected.
   */
  async patchGroup(p: Principal, id: string, body: unknown, q: ListQuery = {}, ifMatch?: string): Promise<Record<string, unknown> | null> {
    const scope = this.scopeOf(p);
    const g = await this.groupRow(scope, id);
    if (!g) throw ScimError.notFound('Group not found');
    requireVersion(await this.toGroup(scope, g, false), ifMatch);
    const add: string[] = [];
    const remove: string[] = [];
    let rename: string | null = null;
    let replaceMembers: string[] | null = null;
    for (const op of readPatch(body)) {
      const path = op.path?.trim() ?? null;
      const lower = path?.toLowerCase() ?? null;
      const fromPath = path ? memberFilterValue(path) : null;
      if (lower !== null && READ_ONLY.test(lower.replace(/^urn:ietf:params:scim:schemas:core:2\.0:group:/, ''))) {
        throw ScimError.badRequest('mutability', `${path!.slice(0, 40)} is read-only`);
      } else if (fromPath !== null) {
        if (op.op !== 'remove') throw ScimError.badRequest('invalidPath', 'A filtered members path can only be removed');
        remove.push(fromPath);
      } else if (lower === 'members') {
        const values = op.value === undefined ? null : (Array.isArray(op.value) ? op.value : [op.value]).map((m) => this.memberId(m));
        if (op.op === 'add') add.push(...values!);
        else if (op.op === 'remove') remove.push(...(values ?? (await this.memberIds(id))));
        else replaceMembers = values ?? [];
      } else if (lower === 'displayname' || (lower === null && op.value && typeof op.value === 'object' && !Array.isArray(op.value))) {
        const fields = lower === null ? (op.value as Record<string, unknown>) : null;
        if (fields && fields.id !== undefined && fields.id !== id) throw ScimError.badRequest('mutability', 'id is read-only');
        if (fields && fields.meta !== undefined) throw ScimError.badRequest('mutability', 'meta is read-only');
        const value = lower === null ? fields!.displayName : op.value;
        if (lower === null && (op.value as Record<string, unknown>).members !== undefined) {
          replaceMembers = ((op.value as Record<string, unknown>).members as unknown[]).map((m) => this.memberId(m));
        }
        if (value !== undefined) rename = text(value, 'displayName');
      } else if (lower === 'externalid') {
        await this.db.exec(`UPDATE scim_groups SET external_id = $2, updated_at = now() WHERE id = $1`, [id, op.op === 'remove' ? null : text(op.value, 'externalId')]);
      } else {
        throw ScimError.badRequest('invalidPath', `Unsupported path for a group`);
      }
    }
    if (rename !== null && rename !== g.display_name) {
      await this.db.exec(`UPDATE scim_groups SET display_name = $2, updated_at = now() WHERE id = $1`, [id, rename]);
    }
    if (replaceMembers !== null) {
      const current = new Set(await this.memberIds(id));
      const wanted = new Set(replaceMembers);
      add.push(...replaceMembers.filter((m) => !current.has(m)));
      remove.push(...[...current].filter((m) => !wanted.has(m)));
    }
    const renamed = rename !== null && rename !== g.display_name;
    await this.changeMembers(p, scope, id, add, remove, renamed ? await this.memberIds(id) : []);
    if (q.attributes === undefined && q.excludedAttributes === undefined) return null;
    const excluded = typeof q.excludedAttributes === 'string' && /(^|,)\s*members\s*(,|$)/i.test(q.excludedAttributes);
    return projection(q)(await this.toGroup(scope, (await this.groupRow(scope, id))!, !excluded));
  }

  async deleteGroup(p: Principal, id: string, ifMatch?: string): Promise<void> {
    const scope = this.scopeOf(p);
    const g = await this.groupRow(scope, id);
    if (!g) throw ScimError.notFound('Group not found');
    requireVersion(await this.toGroup(scope, g, false), ifMatch);
    const members = await this.memberIds(id);
    await this.db.exec(`DELETE FROM scim_groups WHERE id = $1`, [id]);
    await this.reapply(p, scope, members);
  }

  private memberId(m: unknown): string {
    const value = m && typeof m === 'object' ? (m as Record<string, unknown>).value : undefined;
    if (typeof value !== 'string' || value.length > 100) throw ScimError.badRequest('invalidValue', 'Each member needs a value (a user id)');
    return value;
  }

  private async memberIds(groupId: string): Promise<string[]> {
    return (await this.db.rows<{ user_id: string }>(`SELECT user_id FROM scim_group_members WHERE group_id = $1`, [groupId])).map((r) => r.user_id);
  }

  /**
   * Members are users of the connection (an unknown id is 400 `invalidValue`); mapped roles are
   * re-applied to everyone touched. Set-based: a group push of a thousand members is a handful of
   * statements, not a few per member.
   */
  private async changeMembers(p: Principal, scope: ConnectionScope, groupId: string, add: string[], remove: string[], alsoReapply: string[] = []): Promise<void> {
    const touched = new Set<string>(alsoReapply);
    const adding = [...new Set(add)];
    if (adding.length) {
      const malformed = adding.find((userId) => !UUID.test(userId));
      const known = malformed ? new Set<string>() : new Set(await this.users.existing(scope, adding));
      const unknown = malformed ?? adding.find((userId) => !known.has(userId));
      if (unknown !== undefined) throw ScimError.badRequest('invalidValue', `Member ${JSON.stringify(unknown.slice(0, 40))} is not a user of this connection`);
      for (const userId of await this.users.addGroupMembers(scope, groupId, adding)) touched.add(userId);
    }
    const removable = [...new Set(remove)].filter((id) => UUID.test(id));
    if (removable.length) {
      const gone = await this.db.rows<{ user_id: string }>(`DELETE FROM scim_group_members WHERE group_id = $1 AND user_id = ANY($2::uuid[]) RETURNING user_id`, [groupId, removable]);
      for (const r of gone) touched.add(r.user_id);
    }
    if (touched.size) await this.db.exec(`UPDATE scim_groups SET updated_at = now() WHERE id = $1`, [groupId]);
    await this.reapply(p, scope, [...touched]);
  }

  private async reapply(p: Principal, scope: ConnectionScope, userIds: string[]): Promise<void> {
    if (!userIds.length || !(await this.users.hasMappings(scope))) return;
    const connection = await this.db.one<{ default_role_id: string | null }>(`SELECT default_role_id FROM scim_connections WHERE id = $1`, [scope.connectionId]);
    for (const userId of userIds) {
      const groups = (await this.db.rows<{ display_name: string }>(
        `SELECT g.display_name FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id WHERE m.connection_id = $1 AND m.user_id = $2`,
        [scope.connectionId, userId],
      )).map((g) => g.display_name);
      const applied = await this.tx.withSystemContext('group-to-role mappings re-check the administrator who saved them', () =>
        this.applier.apply({ orgId: scope.orgId, partnerId: scope.partnerId, connectionId: scope.connectionId, defaultRoleId: connection?.default_role_id ?? null, actorId: p.userId }, userId, groups),
      );
      if (applied.outcome !== 'no_mappings' && applied.outcome !== 'unchanged') {
        await this.audit.record({ action: 'scim.user.role_mapped', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: userId, details: { connectionId: scope.connectionId, outcome: applied.outcome, roleId: applied.roleId ?? null } });
        this.forgetAfterCommit(userId);
      }
    }
  }
}

/**
 * The lookups IdPs make before every create (`userName eq "…"`, the work email, `externalId eq "…"`),
 * recognised so that the repository reads only the people they can match; any other filter reads
 * the connection's people as it is.
 */
export function lookupCandidates(filter: string): Candidates | undefined {
  const m = /^\s*(userName|emails\[type eq "work"\]\.value|emails\.value|emails|externalId)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  if (!m) return undefined;
  let value: string;
  try {
    value = JSON.parse(`"${m[2]}"`) as string;
  } catch {
    return undefined;
  }
  const attribute = m[1].toLowerCase();
  return attribute === 'username' ? { userName: value } : attribute === 'externalid' ? { externalId: value } : { email: value };
}

/** `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5) on top-level attributes; id, schemas and meta always stay. */
export function projection(q: ListQuery): (resource: Record<string, unknown>) => Record<string, unknown> {
  const list = (v: unknown, name: string): string[] | null => {
    if (v === undefined || v === '') return null;
    if (typeof v !== 'string' || v.length > 1000) throw ScimError.badRequest('invalidValue', `${name} must be a comma-separated list`);
    return v.split(',').map((s) => s.trim().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').split('.')[0].toLowerCase()).filter(Boolean);
  };
  const include = list(q.attributes, 'attributes');
  const exclude = list(q.excludedAttributes, 'excludedAttributes');
  const always = new Set(['id', 'schemas', 'meta']);
  return (resource) => {
    if (!include && !exclude) return resource;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(resource)) {
      const key = k.toLowerCase();
      if (always.has(key) || (include ? include.includes(key) : !exclude!.includes(key))) out[k] = v;
    }
    return out;
  };
}
