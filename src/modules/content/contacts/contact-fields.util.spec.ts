import { canonicalContact, changedContactFields, emailKey, nameKey } from './contact-fields.util';

describe('contact matching keys', () => {
  it('folds case and surrounding spaces of an email', () => {
    expect(emailKey('  Ann.Lee@Example.COM ')).toBe('ann.lee@example.com');
    expect(emailKey('   ')).toBeNull();
    expect(emailKey(null)).toBeNull();
  });

  it('meets names written in another order, case, punctuation or without accents', () => {
    expect(nameKey('Dupont, Élise')).toBe(nameKey('elise dupont'));
    expect(nameKey('Ann  Lee')).toBe(nameKey('LEE ann'));
    expect(nameKey('Ann Lee')).not.toBe(nameKey('Ann Leigh'));
    expect(nameKey(' - ')).toBeNull();
  });
});

describe('canonical contact fields', () => {
  it('treats blank optional fields as absent and trims the rest', () => {
    expect(canonicalContact({ name: ' Ann ', email: ' ', title: ' CTO ', phones: [{ type: 'work', number: ' 555 ' }] })).toEqual({
      name: 'Ann',
      email: null,
      phones: [{ type: 'work', number: '555' }],
      title: 'CTO',
      notes: null,
      siteId: null,
    });
  });

  it('lists exactly the fields that differ', () => {
    const a = canonicalContact({ name: 'Ann', email: 'a@x.io', phones: [{ type: 'work', number: '1' }] });
    expect(changedContactFields(a, { ...a })).toEqual([]);
    expect(changedContactFields(a, { ...a, email: 'b@x.io', phones: [{ type: 'mobile', number: '1' }] })).toEqual(['email', 'phones']);
  });
});
