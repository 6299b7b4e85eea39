import type { INestApplicationContext } from '@nestjs/common';
import { parseArgs } from 'node:util';
import { createApp, prepareDatabase } from '../bootstrap';
import { APP_CONFIG, AppConfig, loadConfig } from '../infra/config/app-config';
import { randomToken, tokenHash } from '../infra/crypto/secret-box.service';
import { DbService } from '../infra/database/db.service';
import { TenantTransactionService } from '../infra/database/tenant-transaction.service';
import { AuditService } from '../modules/audit/audit.service';
import { AuthRepository } from '../modules/auth/auth.repository';
import { PartnerService } from '../modules/tenancy/partners/partner.service';
import { RoleService } from '../modules/tenancy/roles/role.service';
import { AccountProvisioningService } from '../modules/tenancy/users/account-provisioning.service';

export const ADMIN_ROLE_NAME = 'Administrator';
const DEFAULT_LINK_HOURS = 72;
const MAX_LINK_HOURS = 168;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class BootstrapError extends Error {}

export interface BootstrapAdminOptions {
  partner: string;
  email: string;
  name?: string;
  /** How long the set-password link works, in hours (1–168, default 72). */
  linkHours?: number;
  /** Issues a new link for an administrator this command created who has not set a password yet. */
  newLink?: boolean;
}

export interface BootstrapAdminResult {
  partnerId: string;
  userId: string;
  roleId: string;
  /** The one-time token of the set-password link; shown once, stored only as its hash. */
  token: string;
  link: string;
  expiresAt: Date;
}

/**
 * The first partner and its administrator on an empty production database: the partner, a
 * partner role `Administrator` with every permission, the user (no password) as a technician of
 * every organization of the partner, and a one-time link to choose the password. The link is the
 * password-reset token the sign-in module already checks (hashed at rest, single use, only the
 * newest works), issued for longer than a reset link. An invitation cannot do this: accepting one
 * needs an account that can already sign in.
 *
 * Refuses an email that already has an account and a partner name already taken, so running it
 * twice creates nothing; `newLink` re-issues the link while the administrator has no password.
 */
export async function bootstrapAdmin(app: INestApplicationContext, opts: BootstrapAdminOptions): Promise<BootstrapAdminResult> {
  const partnerName = opts.partner?.trim();
  const email = opts.email?.trim();
  const name = opts.name?.trim() || email?.split('@')[0];
  const hours = opts.linkHours ?? DEFAULT_LINK_HOURS;
  if (!partnerName || partnerName.length > 255) throw new BootstrapError('--partner must be a name of 1 to 255 characters');
  if (!email || email.length > 255 || !EMAIL.test(email)) throw new BootstrapError('--email must be an email address of at most 255 characters');
  if (name!.length > 255) throw new BootstrapError('--name must be at most 255 characters');
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_LINK_HOURS) throw new BootstrapError(`--link-hours must be a whole number of hours from 1 to ${MAX_LINK_HOURS}`);

  const db = app.get(DbService, { strict: false });
  const auth = app.get(AuthRepository, { strict: false });
  const audit = app.get(AuditService, { strict: false });
  // The rows belong to tenancy (src/infra/database/table-owners.ts): written through its services.
  const partners = app.get(PartnerService, { strict: false });
  const roles = app.get(RoleService, { strict: false });
  const accounts = app.get(AccountProvisioningService, { strict: false });
  const config = app.get<AppConfig>(APP_CONFIG, { strict: false });
  const token = randomToken(32);

  const created = await app.get(TenantTransactionService, { strict: false }).withSystemContext('the first partner and administrator exist before anyone can sign in', async () => {
    const existing = await db.one<{ id: string; password_hash: string | null }>(`SELECT id, password_hash FROM users WHERE lower(email) = lower($1)`, [email]);
    if (opts.newLink) {
      const admin = existing
        ? await db.one<{ partner_id: string; role_id: string }>(
            `SELECT pm.partner_id, pm.role_id FROM partner_memberships pm JOIN partners p ON p.id = pm.partner_id JOIN roles r ON r.id = pm.role_id
              WHERE pm.user_id = $1 AND p.name = $2 AND r.name = $3 AND r.permissions = ARRAY['*']::text[]`,
            [existing.id, partnerName, ADMIN_ROLE_NAME],
          )
        : null;
      if (!existing || !admin) throw new BootstrapError(`${email} is not the administrator of partner "${partnerName}": nothing to re-issue`);
      if (existing.password_hash) throw new BootstrapError(`${email} has already chosen a password; use "forgot password" to reset it`);
      await auth.issueResetToken(existing.id, tokenHash(token), hours * 3600);
      return { partnerId: admin.partner_id, userId: existing.id, roleId: admin.role_id };
    }
    if (existing) throw new BootstrapError(`An account for ${email} already exists: nothing was created (--new-link re-issues the link of an administrator who has no password yet)`);
    if (await db.one(`SELECT 1 FROM partners WHERE lower(name) = lower($1)`, [partnerName])) {
      throw new BootstrapError(`A partner named "${partnerName}" already exists: nothing was created`);
    }
    const partnerId = await partners.create(partnerName);
    const roleId = await roles.createForPartner(partnerId, ADMIN_ROLE_NAME, ['*']);
    const userId = await accounts.createActiveUser(email, name!).catch((err: { driverError?: { code?: string }; code?: string }) => {
      // Another run created the account between the check and the insert.
      if ((err?.driverError?.code ?? err?.code) === '23505') throw new BootstrapError(`An account for ${email} already exists: nothing was created`);
      throw err;
    });
    await accounts.addPartnerMember(partnerId, userId, roleId);
    await auth.issueResetToken(userId, tokenHash(token), hours * 3600);
    const actor = { type: 'system' as const, id: null };
    await audit.record({ action: 'partner.create', partnerId, resourceType: 'partner', resourceId: partnerId, actor, details: { name: partnerName, via: 'bootstrap-admin' } });
    await audit.record({ action: 'user.create', partnerId, resourceType: 'user', resourceId: userId, actor, details: { email, role: ADMIN_ROLE_NAME, orgAccess: 'all', via: 'bootstrap-admin' } });
    return { partnerId, userId, roleId };
  });
  return {
    ...created,
    token,
    link: `${config.publicUrl.replace(/\/+$/, '')}/reset-password#token=${token}`,
    expiresAt: new Date(Date.now() + hours * 3_600_000),
  };
}

const USAGE = `usage: bootstrap-admin --partner "Acme MSP" --email admin@acme.example [--name "Ann Admin"] [--link-hours 72] [--new-link]`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      partner: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      'link-hours': { type: 'string' },
      'new-link': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (!values.partner || !values.email) throw new BootstrapError(USAGE);
  const linkHours = values['link-hours'] === undefined ? undefined : Number(values['link-hours']);
  const config = loadConfig();
  const db = await prepareDatabase(config);
  const app = await createApp({ ...config, databaseUrl: db.ownerUrl }, db.appUrl, { logs: false });
  try {
    const r = await bootstrapAdmin(app, { partner: values.partner, email: values.email, name: values.name, linkHours, newLink: values['new-link'] });
    const api = `${config.publicUrl.replace(/\/+$/, '')}/api/v1`;
    process.stdout.write(
      [
        values['new-link'] ? `New set-password link for ${values.email} (the previous one no longer works).` : `Created partner "${values.partner.trim()}" (${r.partnerId})`,
        ...(values['new-link'] ? [] : [`and its administrator ${values.email.trim()} (${r.userId}), role ${ADMIN_ROLE_NAME} (every permission, every organization).`]),
        '',
        `Set-password link (one use, until ${r.expiresAt.toISOString()}; shown only now):`,
        `  ${r.link}`,
        'Without a console serving that page, choose the password with the API:',
        `  curl -X POST ${api}/auth/reset-password -H 'Content-Type: application/json' \\`,
        `       -d '{"token":"${r.token}","password":"<12 to 256 characters>"}'`,
        `Then sign in (POST ${api}/auth/login) and enrol an authenticator (POST ${api}/auth/mfa/enroll, then /auth/mfa/activate):`,
        'routes that change settings or act on devices need a session with MFA.',
        '',
      ].join('\n'),
    );
  } finally {
    await app.close();
    await db.embedded?.stop();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(err instanceof BootstrapError ? 2 : 1);
  });
}
