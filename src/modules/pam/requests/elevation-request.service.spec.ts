import { decisionSourceOf } from './elevation-request.service';

const row = (r: Partial<Parameters<typeof decisionSourceOf>[0]>) =>
  decisionSourceOf({ status: 'pending', expires_at: null, decision_source: null, approved_by_name: null, denied_by_name: null, ...r });

describe('decisionSourceOf', () => {
  it('has no source while the request is pending, even when a require_approval rule matched', () => {
    expect(row({ status: 'pending', decision_source: 'pam_rule' })).toBeNull();
  });

  it('names a person who approved or denied as human, whatever decided before', () => {
    expect(row({ status: 'approved', approved_by_name: 'Tech', expires_at: new Date().toISOString() })).toBe('human');
    expect(row({ status: 'denied', denied_by_name: 'Admin' })).toBe('human');
    expect(row({ status: 'revoked', decision_source: 'human', expires_at: new Date().toISOString() })).toBe('human');
  });

  it('keeps the rule or software policy that decided automatically, also after revocation or expiry', () => {
    expect(row({ status: 'auto_approved', decision_source: 'pam_rule', expires_at: new Date().toISOString() })).toBe('pam_rule');
    expect(row({ status: 'denied', decision_source: 'software_policy' })).toBe('software_policy');
    expect(row({ status: 'expired', decision_source: 'pam_rule', expires_at: new Date().toISOString() })).toBe('pam_rule');
  });

  it('has no source for a request that expired while pending', () => {
    expect(row({ status: 'expired', decision_source: 'pam_rule', expires_at: null })).toBeNull();
  });

  it('shows a decision of the organization default as null, the spec having no value for it', () => {
    expect(row({ status: 'denied', decision_source: 'org_default' })).toBeNull();
  });
});
