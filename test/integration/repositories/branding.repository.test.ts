import { BrandingRepository } from '../../../src/modules/branding/branding.repository';
import { PartnerLoginBrandingEntity } from '../../../src/modules/branding/partner-login-branding.entity';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** A partner's login branding: one row per partner, replaced whole, written only by a partner-wide caller. */
describe('BrandingRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let branding: BrandingRepository;
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const asPartnerQ = () => partnerPrincipal(t.partnerQ, [t.orgB]);
  const stored = async (partnerId: string) =>
    (await m.owner.query(`SELECT logo_url, accent_color, headline, created_at, updated_at FROM partner_login_branding WHERE partner_id = $1`, [partnerId])).rows[0];
  const logo = 'https://cdn.example/logo.png';

  beforeAll(async () => {
    m = await startMedium([BrandingRepository], {}, { entities: [PartnerLoginBrandingEntity] });
    branding = m.get(BrandingRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('answers null for a partner without branding', async () => {
    expect(await m.as(asTech(), () => branding.find(t.partnerP))).toBeNull();
  });

  it('creates the branding on the first replace and answers it with its timestamps', async () => {
    const row = await m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: logo, accentColor: '#12abEF', headline: `Welcome ${t.label}` }));
    expect(row).toMatchObject({ partnerId: t.partnerP, logoUrl: logo, accentColor: '#12abEF', headline: `Welcome ${t.label}`, createdAt: expect.any(Date), updatedAt: expect.any(Date) });
    expect(await m.as(asTech(), () => branding.find(t.partnerP))).toMatchObject({ partnerId: t.partnerP, logoUrl: logo, accentColor: '#12abEF', headline: `Welcome ${t.label}` });
    expect(await m.as(asTech(false), () => branding.find(t.partnerP))).toMatchObject({ logoUrl: logo });
  });

  it('replaces every column, nulls included, keeping the row and its creation time', async () => {
    await m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: logo, accentColor: '#000000', headline: 'First' }));
    const before = await stored(t.partnerP);
    await m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: null, accentColor: null, headline: 'Second' }));
    const after = await stored(t.partnerP);
    expect(after).toMatchObject({ logo_url: null, accent_color: null, headline: 'Second', created_at: before.created_at });
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM partner_login_branding WHERE partner_id = $1`, [t.partnerP])).rows[0].n).toBe(1);
  });

  it('refuses a logo that is not an https or inline image address, and a colour that is not #rrggbb', async () => {
    await m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: logo, accentColor: '#111111', headline: 'Kept' }));
    await expect(m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: 'http://cdn.example/logo.png', accentColor: null, headline: null }))).rejects.toThrow(/logo_url_check/);
    await expect(m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: null, accentColor: 'red', headline: null }))).rejects.toThrow(/accent_color_check/);
    await m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: 'data:image/png;base64,iVBORw0KGgo=', accentColor: null, headline: null }));
    expect(await stored(t.partnerP)).toMatchObject({ logo_url: 'data:image/png;base64,iVBORw0KGgo=' });
  });

  it('keeps writes to partner-wide callers of the partner, and shows nothing to another partner or an organization', async () => {
    await m.as(asTech(), () => branding.replace(t.partnerP, { logoUrl: logo, accentColor: '#222222', headline: 'Of P' }));
    await expect(m.as(asTech(false), () => branding.replace(t.partnerP, { logoUrl: null, accentColor: null, headline: 'narrowed' }))).rejects.toThrow(/partner_wide_write_denied/);
    await expect(m.as(asPartnerQ(), () => branding.replace(t.partnerP, { logoUrl: null, accentColor: null, headline: 'hijacked' }))).rejects.toThrow(/row-level security/);
    await expect(m.as(orgPrincipal(t.orgA, { userId: t.adminA }), () => branding.replace(t.partnerP, { logoUrl: null, accentColor: null, headline: 'hijacked' }))).rejects.toThrow(
      /row-level security/,
    );
    expect(await m.as(asPartnerQ(), () => branding.find(t.partnerP))).toBeNull();
    expect(await m.as(orgPrincipal(t.orgA, { userId: t.adminA }), () => branding.find(t.partnerP))).toBeNull();
    expect(await stored(t.partnerP)).toMatchObject({ headline: 'Of P', accent_color: '#222222' });
  });
});
