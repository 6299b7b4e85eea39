import request from 'supertest';
import { DbService } from '../../../src/infra/database/db.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { BrandingRepository } from '../../../src/modules/branding/branding.repository';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

const PATH = '/api/v1/partners/me/login-branding';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8L'), Buffer.alloc(8)]);
const dataUri = (type: string, bytes: Buffer) => `data:image/${type};base64,${bytes.toString('base64')}`;
const sized = (head: Buffer, size: number) => Buffer.concat([head, Buffer.alloc(size - head.length, 1)]);
const KIB_256 = 256 * 1024;

/** tenantFixture plus a partner technician whose role lacks policies:write. */
function brandingFixture() {
  const f = tenantFixture(uniq('brand'));
  f.roles!.push({ key: 'techReadRole', scope: 'partner', partner: 'partner', name: 'Read-only technician', permissions: ['devices:read', 'policies:read'] });
  f.users!.push({ key: 'techReader', email: `tech-reader@${f.emails.tech.split('@')[1]}`, name: 'Tech Reader', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'techReadRole', orgAccess: 'all' } });
  return f;
}

describe('partner login branding API', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let other: Record<string, string>;
  let tech: string;
  let otherTech: string;

  const put = (token: string, body: unknown) => request(t.http).put(PATH).set('Authorization', `Bearer ${token}`).send(body as object);
  const get = (token: string) => request(t.http).get(PATH).set('Authorization', `Bearer ${token}`);
  const fieldsOf = (body: { details?: { field: string }[] }) => (body.details ?? []).map((d) => d.field);

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(brandingFixture());
    other = await t.seed(tenantFixture(uniq('brand-other')));
    tech = await t.token(ids.tech, { mfa: true });
    otherTech = await t.token(other.tech, { mfa: true });
  });
  afterAll(() => t.close());

  describe('reading and replacing', () => {
    it('answers a partner without branding with every field null', async () => {
      const res = await get(otherTech).expect(200);
      expect(res.body).toEqual({ success: true, branding: { logoUrl: null, accentColor: null, headline: null } });
    });

    it('stores a full branding, lower-cases the accent colour and returns it on the next read', async () => {
      const body = { logoUrl: 'https://cdn.example.com/msp/logo.png', accentColor: '#1A73E8', headline: 'Welcome to Acme IT' };
      const res = await put(tech, body).expect(200);
      expect(res.body).toEqual({ success: true, branding: { ...body, accentColor: '#1a73e8' } });
      expect((await get(tech).expect(200)).body.branding).toEqual({ ...body, accentColor: '#1a73e8' });
    });

    it('clears the fields a replace omits', async () => {
      await put(tech, { logoUrl: 'https://cdn.example.com/a.png', accentColor: '#000000', headline: 'Old' }).expect(200);
      const res = await put(tech, { headline: 'Only a headline' }).expect(200);
      expect(res.body.branding).toEqual({ logoUrl: null, accentColor: null, headline: 'Only a headline' });
      const [row] = await ownerQuery(`SELECT logo_url, accent_color, headline FROM partner_login_branding WHERE partner_id = $1`, [ids.partner]);
      expect(row).toEqual({ logo_url: null, accent_color: null, headline: 'Only a headline' });
    });

    it('clears everything with an empty body or explicit nulls, and stores an empty headline as null', async () => {
      await put(tech, { accentColor: '#123456' }).expect(200);
      expect((await put(tech, {}).expect(200)).body.branding).toEqual({ logoUrl: null, accentColor: null, headline: null });
      await put(tech, { accentColor: '#123456' }).expect(200);
      expect((await put(tech, { logoUrl: null, accentColor: null, headline: '' }).expect(200)).body.branding).toEqual({ logoUrl: null, accentColor: null, headline: null });
    });

    it('records branding.update in the partner audit trail without the logo data', async () => {
      const logo = dataUri('png', PNG);
      await put(tech, { logoUrl: logo, accentColor: '#ff6600', headline: 'Audit me' }).expect(200);
      const [row] = await ownerQuery<{ partner_id: string; actor_id: string; resource_type: string; details: Record<string, unknown> }>(
        `SELECT partner_id, actor_id, resource_type, details FROM audit_logs WHERE action = 'branding.update' AND partner_id = $1 ORDER BY created_at DESC LIMIT 1`,
        [ids.partner],
      );
      expect(row).toMatchObject({ partner_id: ids.partner, actor_id: ids.tech, resource_type: 'partner_login_branding' });
      expect(row.details).toMatchObject({ logo: 'data_uri', accentColor: '#ff6600', headline: 'Audit me' });
      expect(row.details.changed).toEqual(expect.arrayContaining(['logoUrl', 'accentColor', 'headline']));
      expect(JSON.stringify(row.details)).not.toContain(PNG.toString('base64'));
    });
  });

  describe('constraints at their edges', () => {
    it('accepts a 120-character headline and refuses 121 characters', async () => {
      await put(tech, { headline: 'h'.repeat(120) }).expect(200);
      const res = await put(tech, { headline: 'h'.repeat(121) }).expect(400);
      expect(res.body).toMatchObject({ success: false, code: 'validation_failed' });
      expect(res.body.details).toEqual([{ field: 'headline', message: 'headline must be at most 120 characters' }]);
    });

    it('counts characters, not UTF-16 units, the way the database column does', async () => {
      const res = await put(tech, { headline: '🚀'.repeat(120) }).expect(200);
      expect(res.body.branding.headline).toBe('🚀'.repeat(120));
      await put(tech, { headline: '🚀'.repeat(121) }).expect(400);
      // a variation selector is a character of its own for PostgreSQL
      expect(fieldsOf((await put(tech, { headline: 'h'.repeat(120) + '\uFE0F' }).expect(400)).body)).toEqual(['headline']);
    });

    it.each(['#GGGGGG', '#abc', '1a73e8', '#1a73e8ff', 'red', 'rgb(0,0,0)', ' #1a73e8'])('refuses the accent colour %p', async (accentColor) => {
      const res = await put(tech, { accentColor }).expect(400);
      expect(res.body.details).toEqual([{ field: 'accentColor', message: 'accentColor must be a #rrggbb hex colour' }]);
    });

    it('refuses a non-string accent colour and headline', async () => {
      expect(fieldsOf((await put(tech, { accentColor: 0x1a73e8 }).expect(400)).body)).toEqual(['accentColor']);
      expect(fieldsOf((await put(tech, { headline: 42 }).expect(400)).body)).toEqual(['headline']);
    });

    it('refuses an http:// logo', async () => {
      const res = await put(tech, { logoUrl: 'http://cdn.example.com/logo.png' }).expect(400);
      expect(res.body.details).toEqual([{ field: 'logoUrl', message: 'logoUrl must use https://, not http://' }]);
    });

    it('refuses an SVG data URI', async () => {
      const res = await put(tech, { logoUrl: dataUri('svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')) }).expect(400);
      expect(res.body.details[0].message).toMatch(/SVG/);
    });

    it('refuses a PNG data URI whose bytes are not a PNG', async () => {
      const res = await put(tech, { logoUrl: dataUri('png', JPEG) }).expect(400);
      expect(res.body.details).toEqual([{ field: 'logoUrl', message: 'logoUrl data is not a PNG image' }]);
      await put(tech, { logoUrl: dataUri('png', Buffer.from('GIF89a not a png')) }).expect(400);
    });

    it('accepts PNG, JPEG and WebP data URIs whose bytes match', async () => {
      for (const [type, bytes] of [['png', PNG], ['jpeg', JPEG], ['webp', WEBP]] as const) {
        const res = await put(tech, { logoUrl: dataUri(type, bytes) }).expect(200);
        expect(res.body.branding.logoUrl).toBe(dataUri(type, bytes));
      }
    });

    it('accepts a logo of exactly 256 KiB and refuses one byte more', async () => {
      await put(tech, { logoUrl: dataUri('png', sized(PNG, KIB_256)) }).expect(200);
      const res = await put(tech, { logoUrl: dataUri('png', sized(PNG, KIB_256 + 1)) }).expect(400);
      expect(res.body.details).toEqual([{ field: 'logoUrl', message: 'logoUrl image must be at most 256 KiB' }]);
    });

    it('refuses other schemes, malformed base64 and unknown properties', async () => {
      for (const logoUrl of ['javascript:alert(1)', 'ftp://cdn.example.com/logo.png', 'data:image/png;base64,%%%', 'data:text/html;base64,PGgxPg==', 'https://user:pw@cdn.example.com/l.png']) {
        expect(fieldsOf((await put(tech, { logoUrl }).expect(400)).body)).toEqual(['logoUrl']);
      }
      const extra = await put(tech, { headline: 'x', footer: 'nope' }).expect(400);
      expect(extra.body.code).toBe('validation_failed');
    });

    it('leaves the stored branding untouched when a replace is refused', async () => {
      await put(tech, { headline: 'Kept', accentColor: '#00aa00' }).expect(200);
      await put(tech, { headline: 'Lost', accentColor: '#GGGGGG' }).expect(400);
      expect((await get(tech).expect(200)).body.branding).toEqual({ logoUrl: null, accentColor: '#00aa00', headline: 'Kept' });
    });

    it('is enforced by the database too, for any writer that bypasses the API', async () => {
      const insert = (col: string, value: string) =>
        ownerQuery(`UPDATE partner_login_branding SET ${col} = $2 WHERE partner_id = $1`, [ids.partner, value]);
      await expect(insert('accent_color', '#GGGGGG')).rejects.toThrow(/partner_login_branding_accent_color_check/);
      await expect(insert('headline', 'h'.repeat(121))).rejects.toThrow(/too long/);
      await expect(insert('logo_url', 'http://cdn.example.com/logo.png')).rejects.toThrow(/partner_login_branding_logo_url_check/);
      await expect(insert('logo_url', dataUri('svg+xml', Buffer.from('<svg/>')))).rejects.toThrow(/partner_login_branding_logo_url_check/);
      await expect(insert('logo_url', dataUri('png', sized(PNG, KIB_256 + 1)))).rejects.toThrow(/partner_login_branding_logo_url_check/);
      await expect(insert('logo_url', dataUri('png', sized(PNG, KIB_256)))).resolves.toBeDefined();
    });
  });

  describe('who may call', () => {
    it('needs a bearer token', async () => {
      expect((await request(t.http).get(PATH).expect(401)).body.code).toBe('unauthenticated');
      expect((await request(t.http).put(PATH).send({}).expect(401)).body.code).toBe('unauthenticated');
    });

    it('refuses organization-scope sessions, even with every permission and MFA', async () => {
      const orgAdmin = await t.token(ids.adminA, { mfa: true });
      expect((await get(orgAdmin).expect(403)).body.code).toBe('partner_scope_required');
      expect((await put(orgAdmin, { headline: 'x' }).expect(403)).body.code).toBe('partner_scope_required');
    });

    it('lets a technician without policies:write read but not replace', async () => {
      const reader = await t.token(ids.techReader, { mfa: true });
      await get(reader).expect(200);
      const res = await put(reader, { headline: 'x' }).expect(403);
      expect(res.body).toMatchObject({ code: 'forbidden', permission: 'policies:write' });
    });

    it('needs an MFA-satisfied session to replace', async () => {
      const noMfa = await t.token(ids.tech);
      await get(noMfa).expect(200);
      expect((await put(noMfa, { headline: 'x' }).expect(403)).body.code).toBe('mfa_required');
    });
  });

  describe('tenant isolation', () => {
    it("keeps each partner's branding to itself", async () => {
      await put(tech, { headline: 'Partner one', accentColor: '#111111' }).expect(200);
      await put(otherTech, { headline: 'Partner two', accentColor: '#222222' }).expect(200);
      expect((await get(tech).expect(200)).body.branding.headline).toBe('Partner one');
      expect((await get(otherTech).expect(200)).body.branding.headline).toBe('Partner two');
      await put(tech, {}).expect(200);
      expect((await get(otherTech).expect(200)).body.branding).toEqual({ logoUrl: null, accentColor: '#222222', headline: 'Partner two' });
    });

    it("hides another partner's row from the request role and refuses writes into it", async () => {
      await put(otherTech, { headline: 'Partner two' }).expect(200);
      const tx = t.app.get(TenantTransactionService);
      const db = t.app.get(DbService);
      const scope = { scope: 'partner' as const, orgIds: [], partnerIds: [ids.partner], userId: ids.tech };
      const visible = await tx.run(scope, () => db.rows<{ partner_id: string }>(`SELECT partner_id FROM partner_login_branding`));
      expect(visible.map((r) => r.partner_id)).toEqual([ids.partner]);
      const updated = await tx.run(scope, () => db.exec(`UPDATE partner_login_branding SET headline = 'hijacked' WHERE partner_id = $1`, [other.partner]));
      expect(updated).toBe(0);
      await expect(
        tx.run(scope, () => db.exec(`INSERT INTO partner_login_branding (partner_id, headline) VALUES ($1, 'x') ON CONFLICT DO NOTHING`, [other.partner])),
      ).rejects.toThrow(/row-level security/);
      const [row] = await ownerQuery<{ headline: string }>(`SELECT headline FROM partner_login_branding WHERE partner_id = $1`, [other.partner]);
      expect(row.headline).toBe('Partner two');
    });

    it("gives the entity repository the request's transaction: it sees the transaction's own writes, and another partner's row stays hidden and unwritable", async () => {
      await put(otherTech, { headline: 'Partner two' }).expect(200);
      const tx = t.app.get(TenantTransactionService);
      const db = t.app.get(DbService);
      const repo = t.app.get(BrandingRepository);
      const scope = { scope: 'partner' as const, orgIds: [], partnerIds: [ids.partner], userId: ids.tech, partnerWide: true };
      const seen = await tx.run(scope, async () => {
        await db.exec(`UPDATE partner_login_branding SET headline = 'uncommitted' WHERE partner_id = $1`, [ids.partner]);
        return { own: await repo.find(ids.partner), other: await repo.find(other.partner) };
      });
      expect(seen.own?.headline).toBe('uncommitted');
      expect(seen.other).toBeNull();
      await expect(tx.run(scope, () => repo.replace(other.partner, { logoUrl: null, accentColor: null, headline: 'hijacked' }))).rejects.toThrow(/row-level security/);
      const [row] = await ownerQuery<{ headline: string }>(`SELECT headline FROM partner_login_branding WHERE partner_id = $1`, [other.partner]);
      expect(row.headline).toBe('Partner two');
    });

    it('rolls back entity writes with the rest of the transaction', async () => {
      await put(tech, { headline: 'Before' }).expect(200);
      const tx = t.app.get(TenantTransactionService);
      const repo = t.app.get(BrandingRepository);
      const scope = { scope: 'partner' as const, orgIds: [], partnerIds: [ids.partner], userId: ids.tech, partnerWide: true };
      await expect(
        tx.run(scope, async () => {
          await repo.replace(ids.partner, { logoUrl: null, accentColor: null, headline: 'Discarded' });
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect((await get(tech).expect(200)).body.branding.headline).toBe('Before');
    });
  });
});
