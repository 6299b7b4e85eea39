import { randomUUID } from 'node:crypto';
import { SamlSpKeyEntity } from '../../../src/modules/sso/saml/saml-sp-key.entity';
import { SamlSpKeysRepository } from '../../../src/modules/sso/saml/saml-sp-keys.repository';
import { SamlSpKeysService, SP_KEY_OVERLAP_SECONDS } from '../../../src/modules/sso/saml/saml-sp-keys.service';
import { SamlSpSettingsEntity } from '../../../src/modules/sso/saml/saml-sp-settings.entity';
import type { SamlTenant } from '../../../src/modules/sso/saml/saml.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The SAML service provider's keys and settings (saml_sp_keys, saml_sp_settings) through their
 * entities: the private key is stored sealed and read only by the signing and decrypting path,
 * a rotation keeps the previous key published for its overlap window, the settings are created
 * then replaced, and another organization's keys and settings are neither seen nor written.
 */
describe('SAML service-provider keys and settings', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: SamlSpKeysRepository;
  let keys: SamlSpKeysService;
  let tenantA: SamlTenant;
  let untouchedA: SamlTenant;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const stored = async (providerId: string) =>
    (await m.owner.query(`SELECT id, private_key, retires_at, created_at FROM saml_sp_keys WHERE provider_id = $1 ORDER BY created_at`, [providerId])).rows;
  const samlProvider = async (orgId: string): Promise<SamlTenant> => {
    const id = randomUUID();
    await m.owner.query(
      `INSERT INTO sso_providers (id, org_id, name, type, status, entity_id, sso_url, certificate) VALUES ($1, $2, 'SAML ' || $3, 'saml', 'active', 'urn:idp', 'https://idp.example/sso', 'PEM')`,
      [id, orgId, `${t.label}-${id.slice(0, 8)}`],
    );
    return { orgId, partnerId: null, providerId: id };
  };

  beforeAll(async () => {
    m = await startMedium([SamlSpKeysRepository, SamlSpKeysService], {}, { entities: [SamlSpKeyEntity, SamlSpSettingsEntity] });
    repo = m.get(SamlSpKeysRepository);
    keys = m.get(SamlSpKeysService);
    t = await seedTenants(m.owner);
    tenantA = await samlProvider(t.orgA);
    untouchedA = await samlProvider(t.orgA);
  });
  afterAll(() => m.close());

  it('makes the first key at first use, stores its private key sealed, and reads the private key only on the signing path', async () => {
    const [published] = await m.system(() => keys.certificates(tenantA));
    expect(published.certificatePem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(await m.system(() => keys.certificates(tenantA))).toEqual([published]);
    const [row] = await stored(tenantA.providerId);
    expect(row.private_key).not.toContain('PRIVATE KEY');
    const [opened] = await m.system(() => keys.published(tenantA));
    expect(opened).toEqual(expect.objectContaining({ id: row.id, certificatePem: published.certificatePem, retiresAt: null }));
    expect(opened.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const [entity] = await m.as(asAdminA(), () => repo.publishedKeys(tenantA.providerId));
    expect(entity).toEqual(expect.objectContaining({ id: row.id, providerId: tenantA.providerId, orgId: t.orgA, partnerId: null, retiresAt: null }));
    expect(entity.privateKey).toBeUndefined();
  });

  it('rotates: the new key is current and listed first, the previous one retires at the end of its overlap window', async () => {
    const [before] = await m.system(() => keys.certificates(tenantA));
    await m.as(asAdminA(), () => keys.rotate(tenantA));
    const listed = await m.as(asAdminA(), () => keys.listed(tenantA.providerId));
    expect(listed).toHaveLength(2);
    expect(listed[0].retiresAt).toBeNull();
    expect(listed[1]).toEqual({ certificate: before.certificatePem, createdAt: expect.any(Date), retiresAt: expect.any(Date) });
    const overlap = listed[1].retiresAt!.getTime() - Date.now();
    expect(overlap).toBeGreaterThan((SP_KEY_OVERLAP_SECONDS - 60) * 1000);
    expect(overlap).toBeLessThanOrEqual(SP_KEY_OVERLAP_SECONDS * 1000);
    expect((await m.system(() => keys.published(tenantA))).map((k) => k.certificatePem)).toEqual(listed.map((k) => k.certificate));
    await m.owner.query(`UPDATE saml_sp_keys SET retires_at = created_at WHERE provider_id = $1 AND retires_at IS NOT NULL`, [tenantA.providerId]);
    expect((await m.as(asAdminA(), () => repo.publishedKeys(tenantA.providerId))).map((k) => k.certificate)).toEqual([listed[0].certificate]);
  });

  it('creates the settings, then replaces them, stamping who changed them; the sign-in path reads the same values', async () => {
    await m.as(asAdminA(), () => repo.saveSettings(tenantA, { idpSloUrl: 'https://idp.example/slo', requireEncryptedAssertions: false }, t.adminA));
    const first = await m.as(asAdminA(), () => repo.settings(tenantA.providerId));
    expect(first).toEqual(
      expect.objectContaining({ providerId: tenantA.providerId, orgId: t.orgA, partnerId: null, idpSloUrl: 'https://idp.example/slo', requireEncryptedAssertions: false, updatedBy: t.adminA }),
    );
    await m.as(asAdminA(), () => repo.saveSettings(tenantA, { idpSloUrl: null, requireEncryptedAssertions: true }, null));
    const second = await m.as(asAdminA(), () => repo.settings(tenantA.providerId));
    expect(second).toEqual(expect.objectContaining({ idpSloUrl: null, requireEncryptedAssertions: true, updatedBy: null }));
    expect(second!.updatedAt.getTime()).toBeGreaterThan(first!.updatedAt.getTime());
    expect(await m.system(() => repo.signInSettings(tenantA.providerId))).toEqual({ idpSloUrl: null, requireEncryptedAssertions: true });
    expect(await m.system(() => repo.signInSettings(untouchedA.providerId))).toBeNull();
  });

  it('neither shows nor retires another organization’s keys, and refuses to write its keys or settings', async () => {
    expect(await m.as(asAdminB(), () => repo.publishedKeys(tenantA.providerId))).toEqual([]);
    expect(await m.as(asAdminB(), () => repo.publishedKeysWithPrivateKeys(tenantA.providerId))).toEqual([]);
    expect(await m.as(asAdminB(), () => repo.retireCurrentKey(tenantA.providerId, 60))).toBe(0);
    expect(await m.as(asAdminB(), () => repo.settings(tenantA.providerId))).toBeNull();
    await expect(m.as(asAdminB(), () => repo.insertCurrentKey(untouchedA, { id: randomUUID(), certificate: '-----BEGIN CERTIFICATE-----planted', privateKeySealed: 'x' }))).rejects.toThrow(
      /row-level security/,
    );
    await expect(m.as(asAdminB(), () => repo.saveSettings(untouchedA, { idpSloUrl: 'https://evil.example/slo', requireEncryptedAssertions: false }, t.adminB))).rejects.toThrow(
      /row-level security/,
    );
    expect(await stored(untouchedA.providerId)).toEqual([]);
    expect((await stored(tenantA.providerId)).filter((k) => k.retires_at === null)).toHaveLength(1);
    expect((await m.owner.query(`SELECT 1 FROM saml_sp_settings WHERE provider_id = $1`, [untouchedA.providerId])).rows).toEqual([]);
  });
});
