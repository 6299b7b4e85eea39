import { randomUUID } from 'node:crypto';
import { UserEntity } from '../../../src/modules/tenancy/users/user.entity';
import { UserCredentialRepository } from '../../../src/modules/tenancy/users/user-credential.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The credential columns of users: the TOTP step a sign-in claims (system context, as sign-in runs),
 * the pending and active TOTP secrets and the password hash, which a person writes for themselves
 * and which the rule of acting on a person guards when someone else does.
 */
describe('UserCredentialRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let credentials: UserCredentialRepository;
  /** The person-change guard asks about the actor, as a request of a signed-in user sets it. */
  const asAdminA = () => ({ ...orgPrincipal(t.orgA, { userId: t.adminA }), actorId: t.adminA });
  const asReaderA = () => ({ ...orgPrincipal(t.orgA, { userId: t.readerA }), actorId: t.readerA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const stored = async (id: string) =>
    (await m.owner.query(`SELECT password_hash, totp_secret, totp_pending_secret, totp_last_step, updated_at FROM users WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([UserCredentialRepository], {}, { entities: [UserEntity] });
    credentials = m.get(UserCredentialRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('claimTotpStep', () => {
    it('claims a step once, refuses it and every earlier one after, and accepts a later one', async () => {
      const before = await stored(t.readerA);
      expect(await m.system(() => credentials.claimTotpStep(t.readerA, 59_000_000))).toBe(true);
      expect(await m.system(() => credentials.claimTotpStep(t.readerA, 59_000_000))).toBe(false);
      expect(await m.system(() => credentials.claimTotpStep(t.readerA, 58_999_999))).toBe(false);
      expect(await m.system(() => credentials.claimTotpStep(t.readerA, 59_000_001))).toBe(true);
      const after = await stored(t.readerA);
      expect(after.totp_last_step).toBe('59000001');
      expect(after.updated_at).toEqual(before.updated_at);
    });

    it('claims nothing for an account that does not exist, nor for one of another tenant', async () => {
      expect(await m.system(() => credentials.claimTotpStep(randomUUID(), 1))).toBe(false);
      expect(await m.as(asAdminA(), () => credentials.claimTotpStep(t.adminB, 1))).toBe(false);
      expect((await stored(t.adminB)).totp_last_step).toBeNull();
      expect(await m.as(asAdminB(), () => credentials.claimTotpStep(t.adminB, 1))).toBe(true);
    });
  });

  describe('TOTP enrolment and password', () => {
    it('keeps a pending secret apart until it is activated, which clears it', async () => {
      await m.as(asReaderA(), () => credentials.setPendingTotp(t.readerA, `sealed-pending-${t.label}`));
      expect(await stored(t.readerA)).toMatchObject({ totp_pending_secret: `sealed-pending-${t.label}`, totp_secret: null });
      await m.as(asReaderA(), () => credentials.activateTotp(t.readerA, `sealed-active-${t.label}`));
      expect(await stored(t.readerA)).toMatchObject({ totp_pending_secret: null, totp_secret: `sealed-active-${t.label}` });
    });

    it('sets a password for oneself, and for a person the actor has authority over', async () => {
      await m.as(asReaderA(), () => credentials.setPassword(t.readerA, `hash-own-${t.label}`));
      expect((await stored(t.readerA)).password_hash).toBe(`hash-own-${t.label}`);
      await m.as(asAdminA(), () => credentials.setPassword(t.readerA, `hash-by-admin-${t.label}`));
      expect((await stored(t.readerA)).password_hash).toBe(`hash-by-admin-${t.label}`);
    });

    it('refuses a password or a second factor set on a person the actor does not cover', async () => {
      await expect(m.as(asReaderA(), () => credentials.setPassword(t.adminA, 'taken'))).rejects.toThrow(/person_out_of_reach/);
      await expect(m.as(asReaderA(), () => credentials.activateTotp(t.adminA, 'planted'))).rejects.toThrow(/person_out_of_reach/);
      expect(await stored(t.adminA)).toMatchObject({ password_hash: null, totp_secret: null });
    });

    it('changes nothing of an account of another tenant', async () => {
      await m.as(asAdminA(), () => credentials.setPassword(t.adminB, 'taken'));
      await m.as(asAdminA(), () => credentials.setPendingTotp(t.adminB, 'planted'));
      await m.as(asAdminA(), () => credentials.activateTotp(t.adminB, 'planted'));
      expect(await stored(t.adminB)).toMatchObject({ password_hash: null, totp_secret: null, totp_pending_secret: null });
    });
  });
});
