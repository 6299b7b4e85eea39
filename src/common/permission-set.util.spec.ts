import { validate } from 'class-validator';
import { covers, IsPermission, isPermission, normalizePermissions, notCovered } from './permission-set.util';

describe('isPermission', () => {
  it.each(['*', 'devices:read', 'custom-fields:write', 'pam:execute', 'sso:*'])('accepts %s', (p) => expect(isPermission(p)).toBe(true));
  it.each(['', 'devices', 'devices:', ':read', 'device:read', 'devices:delete', 'devices:read:x', '*:read', 'DEVICES:read', 42])(
    'rejects %p',
    (p) => expect(isPermission(p)).toBe(false),
  );
});

describe('covers', () => {
  it('confers everything through the global wildcard', () => {
    expect(covers(['*'], '*')).toBe(true);
    expect(covers(['*'], 'users:write')).toBe(true);
  });

  it('confers a resource action through the resource wildcard only', () => {
    expect(covers(['devices:*'], 'devices:execute')).toBe(true);
    expect(covers(['devices:*'], 'users:read')).toBe(false);
  });

  it('does not confer a wildcard from its parts', () => {
    expect(covers(['devices:read', 'devices:write', 'devices:execute'], 'devices:*')).toBe(false);
    expect(covers(['devices:*'], '*')).toBe(false);
  });
});

describe('notCovered', () => {
  it('lists each missing permission once', () => {
    expect(notCovered(['devices:read'], ['devices:read', 'devices:write', 'devices:write', 'users:read'])).toEqual(['devices:write', 'users:read']);
  });

  it('is empty for a subset', () => expect(notCovered(['devices:*', 'users:read'], ['devices:write', 'users:read'])).toEqual([]));
});

describe('normalizePermissions', () => {
  it('sorts and removes duplicates', () => expect(normalizePermissions(['users:read', 'devices:read', 'users:read'])).toEqual(['devices:read', 'users:read']));
});

describe('IsPermission', () => {
  class Holder {
    @IsPermission({ each: true }) permissions: unknown[];
  }

  it('reports the invalid entries of an array', async () => {
    const ok = Object.assign(new Holder(), { permissions: ['devices:read', '*'] });
    const bad = Object.assign(new Holder(), { permissions: ['devices:read', 'devices:destroy'] });
    expect(await validate(ok)).toHaveLength(0);
    const errors = await validate(bad);
    expect(errors).toHaveLength(1);
    expect(Object.keys(errors[0].constraints ?? {})).toEqual(['isPermission']);
  });
});
