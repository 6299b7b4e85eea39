import { SsoDomainService } from '../../../src/modules/sso/domains/sso-domain.service';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { TestDnsServer } from '../../support/dns/test-dns-server';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { Api, api, ssoFixture } from './sso-test-kit';

interface ClaimedDomain {
  id: string;
  domain: string;
  verified: boolean;
  recordName: string;
  recordValue: string;
}

/** Domain verification against a real DNS server on loopback (DNS_SERVERS points the app at it). */
describe('SSO domain verification', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let ids: Record<string, string>;
  let other: Record<string, string>;
  let adminA: Api, adminANoMfa: Api, readerA: Api, adminB: Api, tech: Api, techA: Api, otherTech: Api;

  const fresh = () => `${uniq('corp')}.example`;
  const claim = async (caller: Api, domain: string, orgId?: string): Promise<ClaimedDomain> => {
    const res = await caller.post('/sso/domains', orgId ? { domain, orgId } : { domain });
    expect(res.status).toBe(201);
    return res.body.domain;
  };
  /** Publishes the record as the IdP's customer would, split into two character-strings. */
  const publish = (d: ClaimedDomain) => {
    const cut = Math.floor(d.recordValue.length / 2);
    dns.setTxt(d.recordName, [[d.recordValue.slice(0, cut), d.recordValue.slice(cut)]]);
  };
  const verifiedDomain = async (caller: Api = adminA): Promise<ClaimedDomain> => {
    const d = await claim(caller, fresh());
    publish(d);
    await caller.post(`/sso/domains/${d.id}/verify`).expect(200);
    return d;
  };
  const stored = async (id: string) =>
    (await ownerQuery<{ verified: boolean; verified_at: Date | null; last_seen_at: Date | null; last_checked_at: Date | null }>(
      `SELECT verified, verified_at, last_seen_at, last_checked_at FROM sso_verified_domains WHERE id = $1`,
      [id],
    ))[0];
  const auditActions = async (id: string) =>
    (await ownerQuery<{ action: string; details: Record<string, unknown>; actor_type: string }>(
      `SELECT action, details, actor_type FROM audit_logs WHERE resource_id = $1 ORDER BY created_at, action`,
      [id],
    ));

  beforeAll(async () => {
    dns = new TestDnsServer();
    await dns.start();
    t = await startTestApp({ DNS_SERVERS: dns.address });
    ids = await t.seed(ssoFixture());
    other = await t.seed(tenantFixture());
    const as = async (userId: string, mfa = true) => api(t, await t.token(userId, { mfa }));
    adminA = await as(ids.adminA);
    adminANoMfa = await as(ids.adminA, false);
    readerA = await as(ids.readerA);
    adminB = await as(ids.adminB);
    tech = await as(ids.tech);
    techA = await as(ids.techA);
    otherTech = await as(other.tech);
  });
  afterAll(async () => {
    await t.close();
    await dns.stop();
  });

  describe('claim', () => {
    it('normalises the domain and returns the TXT record to publish', async () => {
      const label = uniq('bücher');
      const res = await adminA.post('/sso/domains', { domain: `HTTPS://*.${label.toUpperCase()}.Example.:443/login` }).expect(201);
      const ascii = new URL(`http://${label}.example`).hostname;
      expect(res.body).toEqual({
        success: true,
        domain: {
          id: expect.any(String),
          orgId: ids.orgA,
          domain: ascii,
          verified: false,
          verifiedAt: null,
          lastCheckedAt: null,
          recordName: `_svc-verify.${ascii}`,
          recordValue: expect.stringMatching(/^svc-domain-verify=[A-Za-z0-9_-]{43}$/),
          createdAt: expect.any(String),
        },
      });
      expect(ascii).toMatch(/^xn--/);
      const [audit] = await auditActions(res.body.domain.id);
      expect(audit).toMatchObject({ action: 'sso.domain.create', details: { domain: ascii } });
    });

    it.each([['10.0.0.1'], ['localhost'], ['not a domain'], ['']])('rejects %p as a domain', async (domain) => {
      const res = await adminA.post('/sso/domains', { domain }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [expect.objectContaining({ field: 'domain' })] });
    });

    it('refuses the same domain twice for one organization but lets another organization claim it', async () => {
      const domain = fresh();
      await claim(adminA, domain);
      expect((await adminA.post('/sso/domains', { domain: domain.toUpperCase() }).expect(409)).body.code).toBe('domain_already_claimed');
      expect((await claim(adminB, domain)).domain).toBe(domain);
    });

    it('needs orgId from a technician, within the organizations they may reach', async () => {
      expect((await tech.post('/sso/domains', { domain: fresh() }).expect(400)).body.details).toEqual([expect.objectContaining({ field: 'orgId' })]);
      expect((await claim(tech, fresh(), ids.orgB)).domain).toMatch(/\.example$/);
      expect((await techA.post('/sso/domains', { domain: fresh(), orgId: ids.orgB }).expect(404)).body.code).toBe('not_found');
      expect((await adminA.post('/sso/domains', { domain: fresh(), orgId: ids.orgB }).expect(404)).body.code).toBe('not_found');
    });

    it('is refused without MFA, without organizations:write and without a token', async () => {
      expect((await adminANoMfa.post('/sso/domains', { domain: fresh() }).expect(403)).body.code).toBe('mfa_required');
      expect((await readerA.post('/sso/domains', { domain: fresh() }).expect(403)).body.code).toBe('forbidden');
      expect((await api(t, null).post('/sso/domains', { domain: fresh() }).expect(401)).body.code).toBe('unauthenticated');
    });
  });

  describe('verify', () => {
    it('verifies a record split into several TXT strings, recording when', async () => {
      const d = await claim(adminA, fresh());
      publish(d);
      const res = await adminA.post(`/sso/domains/${d.id}/verify`).expect(200);
      expect(res.body).toMatchObject({ success: true, domain: { id: d.id, verified: true, verifiedAt: expect.any(String), lastCheckedAt: expect.any(String) } });
      const row = await stored(d.id);
      expect(row.verified).toBe(true);
      expect(row.last_seen_at).not.toBeNull();
      expect((await auditActions(d.id)).map((a) => a.action)).toEqual(['sso.domain.create', 'sso.domain.verify']);
    });

    it('finds the record among other TXT records of the name', async () => {
      const d = await claim(adminA, fresh());
      dns.setTxt(d.recordName, [['v=spf1 -all'], [d.recordValue]]);
      expect((await adminA.post(`/sso/domains/${d.id}/verify`).expect(200)).body.domain.verified).toBe(true);
    });

    it('reports a missing record, and a record with another token, as record_missing and keeps the domain unverified', async () => {
      const d = await claim(adminA, fresh());
      const res = await adminA.post(`/sso/domains/${d.id}/verify`).expect(400);
      expect(res.body).toMatchObject({ code: 'domain_verification_failed', reason: 'record_missing', recordName: d.recordName, recordValue: d.recordValue });
      dns.setTxt(d.recordName, [['svc-domain-verify=someone-elses-token']]);
      expect((await adminA.post(`/sso/domains/${d.id}/verify`).expect(400)).body.reason).toBe('record_missing');
      const row = await stored(d.id);
      expect(row).toMatchObject({ verified: false, verified_at: null, last_seen_at: null });
      expect(row.last_checked_at).not.toBeNull();
      const audits = await auditActions(d.id);
      expect(audits.filter((a) => a.action === 'sso.domain.verify_failed').map((a) => a.details.reason)).toEqual(['record_missing', 'record_missing']);
    });

    it('reports a DNS server that does not answer in time as dns_unavailable', async () => {
      const d = await claim(adminA, fresh());
      publish(d);
      dns.setSlow(d.recordName, 8000);
      const started = Date.now();
      const res = await adminA.post(`/sso/domains/${d.id}/verify`).expect(400);
      expect(res.body).toMatchObject({ code: 'domain_verification_failed', reason: 'dns_unavailable' });
      expect(Date.now() - started).toBeLessThan(7500);
      expect((await stored(d.id)).verified).toBe(false);
    });

    it('reports SERVFAIL as dns_unavailable', async () => {
      const d = await claim(adminA, fresh());
      dns.setServfail(d.recordName);
      expect((await adminA.post(`/sso/domains/${d.id}/verify`).expect(400)).body.reason).toBe('dns_unavailable');
    });

    it("answers 404 for another tenant's domain and 400 for a malformed id", async () => {
      const d = await claim(adminA, fresh());
      publish(d);
      expect((await adminB.post(`/sso/domains/${d.id}/verify`).expect(404)).body.code).toBe('not_found');
      expect((await otherTech.post(`/sso/domains/${d.id}/verify`).expect(404)).body.code).toBe('not_found');
      expect((await adminA.post('/sso/domains/nope/verify').expect(400)).body.code).toBe('invalid_id');
      expect((await adminANoMfa.post(`/sso/domains/${d.id}/verify`).expect(403)).body.code).toBe('mfa_required');
      expect((await stored(d.id)).verified).toBe(false);
    });
  });

  describe('list and delete', () => {
    it("lists the caller's domains only, filtered by orgId for a technician", async () => {
      const a = await claim(adminA, fresh());
      const b = await claim(adminB, fresh());
      const listA = (await adminA.get('/sso/domains').expect(200)).body;
      expect(listA.success).toBe(true);
      expect(listA.domains.map((d: ClaimedDomain) => d.id)).toContain(a.id);
      expect(listA.domains.map((d: ClaimedDomain) => d.id)).not.toContain(b.id);
      const byOrg = (await tech.get(`/sso/domains?orgId=${ids.orgB}`).expect(200)).body.domains;
      expect(byOrg.map((d: ClaimedDomain) => d.id)).toContain(b.id);
      expect(byOrg.map((d: ClaimedDomain) => d.id)).not.toContain(a.id);
      expect((await adminA.get(`/sso/domains?orgId=${ids.orgB}`).expect(404)).body.code).toBe('not_found');
      expect((await readerA.get('/sso/domains').expect(403)).body.code).toBe('forbidden');
      expect((await otherTech.get('/sso/domains').expect(200)).body.domains.map((d: ClaimedDomain) => d.id)).not.toContain(a.id);
    });

    it('deletes a domain once, audited, and refuses other tenants', async () => {
      const d = await claim(adminA, fresh());
      expect((await adminB.delete(`/sso/domains/${d.id}`).expect(404)).body.code).toBe('not_found');
      expect((await adminANoMfa.delete(`/sso/domains/${d.id}`).expect(403)).body.code).toBe('mfa_required');
      expect((await adminA.delete(`/sso/domains/${d.id}`).expect(200)).body).toEqual({ success: true });
      expect((await adminA.delete(`/sso/domains/${d.id}`).expect(404)).body.code).toBe('not_found');
      expect((await auditActions(d.id)).map((a) => a.action)).toContain('sso.domain.delete');
    });
  });

  describe('re-verification', () => {
    const GRACE_HOURS = 72;
    const ageLastSeen = (id: string, hours: number) =>
      ownerQuery(`UPDATE sso_verified_domains SET last_seen_at = now() - $2 * interval '1 hour' WHERE id = $1`, [id, hours]);

    it('keeps a domain whose record is still published, refreshing when it was seen', async () => {
      const d = await verifiedDomain();
      await ageLastSeen(d.id, 100);
      const report = await t.app.get(SsoDomainService).recheckAll(GRACE_HOURS);
      expect(report.unverified).not.toContain(d.domain);
      const row = await stored(d.id);
      expect(row.verified).toBe(true);
      expect(Date.now() - row.last_seen_at!.getTime()).toBeLessThan(60_000);
    });

    it('keeps a domain whose record vanished within the grace period', async () => {
      const d = await verifiedDomain();
      dns.remove(d.recordName);
      await ageLastSeen(d.id, GRACE_HOURS - 1);
      await t.app.get(SsoDomainService).recheckAll(GRACE_HOURS);
      expect((await stored(d.id)).verified).toBe(true);
    });

    it('un-verifies a domain whose record has been gone longer than the grace period, with an audit event', async () => {
      const d = await verifiedDomain();
      dns.remove(d.recordName);
      await ageLastSeen(d.id, GRACE_HOURS + 1);
      const report = await t.app.get(SsoDomainService).recheckAll(GRACE_HOURS);
      expect(report.unverified).toContain(d.domain);
      expect(await stored(d.id)).toMatchObject({ verified: false, verified_at: null });
      const unverified = (await auditActions(d.id)).filter((a) => a.action === 'sso.domain.unverified');
      expect(unverified).toEqual([{ action: 'sso.domain.unverified', actor_type: 'system', details: expect.objectContaining({ domain: d.domain, graceHours: GRACE_HOURS }) }]);
      const listed = (await adminA.get('/sso/domains').expect(200)).body.domains.find((x: ClaimedDomain) => x.id === d.id);
      expect(listed.verified).toBe(false);
    });

    it('un-verifies once when two instances re-check at the same time', async () => {
      const d = await verifiedDomain();
      dns.remove(d.recordName);
      await ageLastSeen(d.id, GRACE_HOURS + 5);
      const service = t.app.get(SsoDomainService);
      const [first, second] = await Promise.all([service.recheckAll(GRACE_HOURS), service.recheckAll(GRACE_HOURS)]);
      expect([first.unverified.includes(d.domain), second.unverified.includes(d.domain)].filter(Boolean)).toHaveLength(1);
      expect((await auditActions(d.id)).filter((a) => a.action === 'sso.domain.unverified')).toHaveLength(1);
    });

    it('leaves a domain alone while its DNS fails, however old the last sighting', async () => {
      const d = await verifiedDomain();
      dns.setServfail(d.recordName);
      await ageLastSeen(d.id, GRACE_HOURS * 10);
      const report = await t.app.get(SsoDomainService).recheckAll(GRACE_HOURS);
      expect(report.errors).toBeGreaterThan(0);
      expect((await stored(d.id)).verified).toBe(true);
    });

    it('lists every organization that verified a domain, so discovery can see a collision', async () => {
      const domain = fresh();
      const mine = await claim(adminA, domain);
      const theirs = await claim(adminB, domain);
      const service = t.app.get(SsoDomainService);
      publish(mine);
      await adminA.post(`/sso/domains/${mine.id}/verify`).expect(200);
      expect(await service.verifiedOrgIds(domain)).toEqual([ids.orgA]);
      dns.setTxt(mine.recordName, [[mine.recordValue], [theirs.recordValue]]);
      await adminB.post(`/sso/domains/${theirs.id}/verify`).expect(200);
      expect((await service.verifiedOrgIds(domain)).sort()).toEqual([ids.orgA, ids.orgB].sort());
    });
  });
});
