import { ownerQuery } from '../../support/test-app';
import { approvalsOf, fanOut, PamWorld, registerPhone, seedRequest, startPamWorld } from '../pam-lifecycle/pam-lifecycle.kit';

/**
 * Issue 16: a membership suspended by deprovisioning grants nothing, so the approval fan-out of a
 * pending elevation request asks nobody through it (no approval request, no push to their phone).
 */
describe('the approval fan-out and suspended memberships', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
    for (const user of ['adminA', 'siteA1User', 'tech', 'techA']) await registerPhone(w, user, `push-token-${user}-${w.ids[user]}`).expect(201);
  });
  afterAll(async () => {
    await w.t.close();
  });

  const asked = async (requestId: string): Promise<string[]> => {
    const byUser = Object.fromEntries(Object.entries(w.ids).map(([k, v]) => [v, k]));
    return (await approvalsOf(requestId)).map((a) => byUser[a.approver_user_id]).sort();
  };
  const pushedTo = async (requestId: string): Promise<string[]> => {
    const byUser = Object.fromEntries(Object.entries(w.ids).map(([k, v]) => [v, k]));
    const rows = await ownerQuery<{ approver_user_id: string }>(
      `SELECT DISTINCT a.approver_user_id FROM push_outbox o JOIN pam_approval_requests a ON a.id = o.approval_request_id WHERE a.elevation_request_id = $1`,
      [requestId],
    );
    return rows.map((r) => byUser[r.approver_user_id]).sort();
  };
  const suspend = (table: 'organization_memberships' | 'partner_memberships', userKey: string, at: 'now()' | 'NULL') =>
    ownerQuery(`UPDATE ${table} SET suspended_at = ${at} WHERE user_id = $1`, [w.ids[userKey]]);

  it('asks no technician or member whose membership is suspended, and pushes nothing to their phones', async () => {
    const before = await seedRequest(w, { device: 'deviceA1' });
    await fanOut(w, before);
    expect(await asked(before)).toEqual(['adminA', 'siteA1User', 'tech', 'techA']);

    await suspend('partner_memberships', 'techA', 'now()');
    await suspend('organization_memberships', 'adminA', 'now()');
    try {
      const id = await seedRequest(w, { device: 'deviceA1' });
      const result = await fanOut(w, id);
      expect(await asked(id)).toEqual(['siteA1User', 'tech']);
      expect(await pushedTo(id)).toEqual(['siteA1User', 'tech']);
      expect(result).toEqual({ approvals: 2, pushes: 2 });
    } finally {
      await suspend('partner_memberships', 'techA', 'NULL');
      await suspend('organization_memberships', 'adminA', 'NULL');
    }
  });

  it('still asks a person through another membership that is live and grants the right', async () => {
    // The technician is also an administrator of organization A in their own right.
    await ownerQuery(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [w.ids.orgA, w.ids.techA, w.ids.adminRoleA]);
    await suspend('partner_memberships', 'techA', 'now()');
    try {
      const id = await seedRequest(w, { device: 'deviceA1' });
      await fanOut(w, id);
      expect(await asked(id)).toContain('techA');

      await suspend('organization_memberships', 'techA', 'now()');
      const later = await seedRequest(w, { device: 'deviceA1' });
      await fanOut(w, later);
      expect(await asked(later)).not.toContain('techA');
    } finally {
      await ownerQuery(`DELETE FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [w.ids.orgA, w.ids.techA]);
      await suspend('partner_memberships', 'techA', 'NULL');
    }
  });
});
