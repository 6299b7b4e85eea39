import { randomUUID } from 'node:crypto';
import { ScriptBatchRepository, type ScriptRecord } from '../../../src/modules/content/scripts/script-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Scripts as the importer compares and writes them: partner P's own, A's, A2nd's, and B's out of reach. */
describe('ScriptBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let batch: ScriptBatchRepository;
  let ofP: ScriptRecord;
  let ofA: ScriptRecord;
  let ofA2: ScriptRecord;
  let ofB: ScriptRecord;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const script = (over: Partial<ScriptRecord>): ScriptRecord => ({
    id: randomUUID(),
    partner_id: null,
    org_id: null,
    name: `script ${randomUUID().slice(0, 8)}`,
    description: null,
    category: 'maintenance',
    language: 'powershell',
    body: 'Write-Output "hello"',
    parameters: [],
    run_as: 'system',
    timeout_seconds: 300,
    exit_code_severity_mapping: [],
    ...over,
  });
  const stored = async (id: string) =>
    (
      await m.owner.query(
        `SELECT id, partner_id, org_id, name, description, category, language, body, parameters, run_as, timeout_seconds, exit_code_severity_mapping FROM scripts WHERE id = $1`,
        [id],
      )
    ).rows[0] as ScriptRecord | undefined;

  beforeAll(async () => {
    m = await startMedium([ScriptBatchRepository]);
    batch = m.get(ScriptBatchRepository);
    t = await seedTenants(m.owner);
    ofP = script({ partner_id: t.partnerP, name: 'cleanup', parameters: [{ name: 'days', type: 'number', required: true, default: 30 }] });
    ofA = script({ org_id: t.orgA, name: 'a only', language: 'bash', body: 'echo a', run_as: 'user' });
    ofA2 = script({ org_id: t.orgA2, name: 'a2 only' });
    ofB = script({ org_id: t.orgB, name: 'b only' });
    for (const s of [ofP, ofA, ofA2, ofB]) await m.system(() => batch.save(s, true));
  });
  afterAll(() => m.close());

  describe('ofOwners', () => {
    it('answers the partner’s own scripts and those of the organizations asked for, bodies included', async () => {
      const ids = async (orgIds: string[]) => (await m.as(asTech(), () => batch.ofOwners(t.partnerP, orgIds))).map((s) => s.id).sort();
      expect(await ids([t.orgA])).toEqual([ofP.id, ofA.id].sort());
      expect(await ids([t.orgA, t.orgA2])).toEqual([ofP.id, ofA.id, ofA2.id].sort());
      expect(await ids([])).toEqual([ofP.id]);
      const listed = await m.as(asTech(), () => batch.ofOwners(t.partnerP, [t.orgA]));
      expect(listed.find((s) => s.id === ofP.id)).toEqual(ofP);
      expect(listed.find((s) => s.id === ofA.id)).toEqual(ofA);
    });

    it('answers nothing of another partner or its organizations', async () => {
      expect(await m.as(asTech(), () => batch.ofOwners(t.partnerQ, [t.orgB]))).toEqual([]);
      expect((await m.as(asAdminA(), () => batch.ofOwners(t.partnerP, [t.orgA, t.orgB]))).map((s) => s.id).sort()).toEqual([ofP.id, ofA.id].sort());
    });
  });

  describe('save', () => {
    it('inserts a script, and updates it only under the same id and owner', async () => {
      const s = script({ org_id: t.orgA, exit_code_severity_mapping: [{ exitCode: 1, severity: 'warning' }, { from: 2, to: 9, severity: 'error' }] });
      await m.as(asAdminA(), () => batch.save(s, true));
      expect(await stored(s.id)).toEqual(s);
      const changed: ScriptRecord = { ...s, name: `renamed ${t.label}`, description: 'now described', category: 'audit', language: 'python', body: 'print(1)', run_as: 'user', timeout_seconds: 60 };
      await m.as(asAdminA(), () => batch.save(changed, false));
      expect(await stored(s.id)).toEqual(changed);
      await m.as(asTech(), () => batch.save({ ...changed, org_id: t.orgA2, name: 'other owner' }, false));
      await m.as(asTech(), () => batch.save({ ...changed, org_id: null, partner_id: t.partnerP, name: 'other owner' }, false));
      expect(await stored(s.id)).toEqual(changed);
    });

    it('refuses a second script of the same name for one owner, whatever the case, and a body out of bounds', async () => {
      await expect(m.as(asAdminA(), () => batch.save(script({ org_id: t.orgA, name: 'A ONLY' }), true))).rejects.toThrow(/duplicate key/);
      const sameNameElsewhere = script({ org_id: t.orgA2, name: 'a only' });
      await m.as(asTech(), () => batch.save(sameNameElsewhere, true));
      expect(await stored(sameNameElsewhere.id)).toEqual(sameNameElsewhere);
      await expect(m.as(asAdminA(), () => batch.save({ ...ofA, body: '' }, false))).rejects.toThrow(/check constraint/);
      expect(await stored(ofA.id)).toEqual(ofA);
    });

    it('keeps partner scripts to partner-wide callers', async () => {
      const s = script({ partner_id: t.partnerP });
      await expect(m.as(asTech(false), () => batch.save(s, true))).rejects.toThrow(/partner_wide_write_denied/);
      await expect(m.as(asTech(false), () => batch.save({ ...ofP, body: 'narrowed' }, false))).rejects.toThrow(/partner_wide_write_denied/);
      await m.as(asTech(), () => batch.save(s, true));
      expect(await stored(s.id)).toEqual(s);
      expect(await stored(ofP.id)).toEqual(ofP);
    });

    it('neither creates nor changes a script of another tenant', async () => {
      const planted = script({ org_id: t.orgB });
      await expect(m.as(asAdminA(), () => batch.save(planted, true))).rejects.toThrow(/row-level security/);
      await expect(m.as(asTech(), () => batch.save(script({ partner_id: t.partnerQ }), true))).rejects.toThrow(/row-level security/);
      await m.as(asAdminA(), () => batch.save({ ...ofB, body: 'hijacked' }, false));
      await m.as(asAdminA(), () => batch.save({ ...ofP, body: 'hijacked' }, false));
      expect(await stored(ofB.id)).toEqual(ofB);
      expect(await stored(ofP.id)).toEqual(ofP);
      expect(await stored(planted.id)).toBeUndefined();
    });
  });
});
