import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger/dist/constants';
import type { Response } from 'express';
import { SsoLoginController } from '../login/sso-login.controller';
import type { ProviderOwner } from '../login/sso-login.repository';
import { SamlController } from '../saml/saml.controller';
import { SignInStartRoutes, type SignInStarter } from './sign-in-start.mixin';
import type { StartedSignIn } from './sign-in-response.util';

/** The GET routes a controller serves, own and inherited, in the order Nest registers them. */
function getRoutes(controller: Function): { method: string; path: string; operation: { summary: string; description: string } }[] {
  const prototype = controller.prototype as Record<string, Function>;
  return new MetadataScanner()
    .getAllMethodNames(prototype)
    .filter((method) => Reflect.getMetadata(METHOD_METADATA, prototype[method]) === RequestMethod.GET)
    .map((method) => ({
      method,
      path: Reflect.getMetadata(PATH_METADATA, prototype[method]) as string,
      operation: Reflect.getMetadata(DECORATORS.API_OPERATION, prototype[method]) as { summary: string; description: string },
    }));
}

describe('SignInStartRoutes', () => {
  it.each([
    ['OIDC', SsoLoginController, 'SAML'],
    ['SAML', SamlController, 'OIDC'],
  ])('gives the %s controller the partner route before the organization route, each described for its protocol', (name, controller, other) => {
    const starts = getRoutes(controller).filter((route) => route.method.startsWith('start'));
    expect(starts.map((route) => route.path)).toEqual(['login/partner/:partnerId', 'login/:orgId']);
    for (const [{ operation }, owner] of starts.map((route, i) => [route, ['partner', 'organization'][i]] as const)) {
      expect(operation.summary).toMatch(new RegExp(`^Starts ${name} sign-in `));
      expect(operation.description).toContain(`oldest active provider, which must be ${name}`);
      expect(operation.description).toMatch(new RegExp(`for an? ${other} provider, with \`loginUrl\`: the ${owner}'s ${other} start route`));
    }
  });

  it('redirects to the identity provider with the state cookie its protocol started the sign-in with', async () => {
    const started: StartedSignIn = { authUrl: 'https://idp.example/authorize?x=1', stateCookie: 'state.sig', cookie: { path: '/api/v1/sso/saml/acs', httpOnly: true } };
    const asked: [ProviderOwner, unknown][] = [];
    const starter: SignInStarter = { start: async (owner, redirect) => (asked.push([owner, redirect]), started) };
    const Routes = SignInStartRoutes({ name: 'SAML', request: 'an AuthnRequest', other: 'OIDC' });
    const calls: unknown[][] = [];
    const res = {
      cookie: (...args: unknown[]) => calls.push(['cookie', ...args]),
      setHeader: (...args: unknown[]) => calls.push(['setHeader', ...args]),
      redirect: (...args: unknown[]) => calls.push(['redirect', ...args]),
    } as unknown as Response;

    await new Routes(starter).startOrganization('org-1', '/devices', res);
    await new Routes(starter).startPartner('partner-1', undefined, res);

    expect(asked).toEqual([
      [{ orgId: 'org-1' }, '/devices'],
      [{ partnerId: 'partner-1' }, undefined],
    ]);
    expect(calls.slice(0, 3)).toEqual([
      ['cookie', 'svc_sso_state', 'state.sig', started.cookie],
      ['setHeader', 'Cache-Control', 'no-store'],
      ['redirect', 302, started.authUrl],
    ]);
  });
});
