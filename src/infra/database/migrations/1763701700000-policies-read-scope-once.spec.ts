import { perStatement, POLICIES } from './1763701700000-policies-read-scope-once';

const ORGS = '((SELECT app_is_system()) OR (org_id IS NOT NULL AND org_id = ANY ((SELECT app_org_ids())::uuid[])))';

describe('policies that read the scope once per statement', () => {
  it('writes out an organization check with the settings read in scalar subqueries, keeping its NULL check', () => {
    expect(perStatement('app_has_org_access(org_id)')).toBe(ORGS);
  });

  it('writes out an owner check as the organization check or, without an organization, the partner check', () => {
    expect(perStatement('app_has_owner_access(org_id, partner_id)')).toBe(
      `(CASE WHEN org_id IS NOT NULL THEN ${ORGS} ELSE ((SELECT app_is_system()) OR (partner_id IS NOT NULL AND partner_id = ANY ((SELECT app_partner_ids())::uuid[]))) END)`,
    );
  });

  it('writes out the site check, and wraps the system and current-user reads, including qualified columns inside subqueries', () => {
    expect(perStatement('((site_id IS NULL) OR app_has_site_access(site_id))')).toBe(
      '((site_id IS NULL) OR ((SELECT app_site_ids()) IS NULL OR site_id = ANY ((SELECT app_site_ids())::uuid[])))',
    );
    expect(perStatement('(app_is_system() OR (user_id = app_current_user_id()))')).toBe('((SELECT app_is_system()) OR (user_id = (SELECT app_current_user_id())))');
    expect(perStatement('(m.user_id = users.id) AND app_has_org_access(m.org_id)')).toContain('m.org_id = ANY ((SELECT app_org_ids())::uuid[])');
  });

  it('leaves no per-row call of a rewritten function in any listed policy, and is stable when applied twice', () => {
    for (const [, , using] of POLICIES) {
      const once = perStatement(using);
      expect(once).not.toMatch(/app_has_(org|owner|partner|site)_access\(|(?<!SELECT )app_(is_system|current_user_id)\(\)/);
      expect(perStatement(once)).toBe(once);
    }
  });
});
