/*
 * Readable sentences for the codes the service sends back to the login pages: the ?error= of
 * an SSO callback (docs/sso-login.md, "Redirect codes"), the ?ssoLinkError= of self-service linking, and the API
 * error codes of the password path. No code is ever shown raw; an unknown one gets a generic
 * sentence. Loaded by the pages, and by the unit tests through module.exports.
 */
(function (root, factory) {
  var api = factory();
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.RmmMessages = api;
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  var CALLBACK_ERRORS = {
    sso_error: 'Single sign-on did not complete. Please try again; if it keeps failing, contact your administrator.',
    invalid_callback: 'This sign-in could not be matched to this browser. Start again from this page, in the same browser window.',
    session_expired: 'The sign-in took too long and has expired. Please start again.',
    sso_config_changed: 'Single sign-on settings changed while you were signing in. Please start again.',
    sso_provider_inactive: 'Single sign-on is not active for your organization. Sign in with your password, or contact your administrator.',
    sso_email_unverified: 'Your identity provider says your email address is not verified. Verify it there, then try again.',
    sso_domain_unverified: 'Your email domain has not been verified for single sign-on yet. Ask your administrator to verify it.',
    domain_not_allowed: 'Accounts from your email domain may not sign in with this identity provider.',
    user_not_found: 'There is no account for this identity here. Ask your administrator to invite you.',
    user_disabled: 'Your account is disabled. Contact your administrator.',
    no_org_access: 'Your account does not have access to this organization. Contact your administrator.',
    invite_required: 'Your identity is not recognised here. Ask your administrator to invite you before signing in.',
    default_role_required: 'Your account cannot be created automatically because no default role is set up. Contact your administrator.',
    invalid_provider_configuration: 'The single sign-on provider is not set up correctly. Contact your administrator.',
    identity_in_use: 'This identity provider account is already linked to another user.',
  };

  var LINK_ERRORS = {
    email_mismatch: 'The identity provider account has a different email address from yours, so it was not linked.',
    identity_in_use: 'That identity provider account is already linked to another user, so it was not linked.',
    user_gone: 'Your account was removed while linking, so nothing was linked.',
    session_invalid: 'Your session ended while linking. Sign in again, then link your account.',
    config_changed: 'Single sign-on settings changed while linking. Please try again.',
  };

  var API_ERRORS = {
    invalid_credentials: 'The email address or password is not correct.',
    invalid_mfa_code: 'That code is not correct or was already used. Enter the current code from your authenticator app.',
    invalid_mfa_token: 'The sign-in step expired. Please enter your email and password again.',
    invalid_exchange_code: 'This sign-in link has expired or was already used. Please sign in again.',
    rate_limited: 'Too many attempts. Please wait a minute and try again.',
    validation_failed: 'Please check what you entered and try again.',
    user_disabled: CALLBACK_ERRORS.user_disabled,
    network_error: 'The service could not be reached. Check your connection and try again.',
  };

  var GENERIC = 'Sign-in did not work. Please try again.';

  function pick(table, code) {
    return typeof code === 'string' && Object.prototype.hasOwnProperty.call(table, code) ? table[code] : GENERIC;
  }

  return {
    CALLBACK_ERRORS: CALLBACK_ERRORS,
    LINK_ERRORS: LINK_ERRORS,
    API_ERRORS: API_ERRORS,
    GENERIC: GENERIC,
    callbackError: function (code) { return pick(CALLBACK_ERRORS, code); },
    linkError: function (code) { return pick(LINK_ERRORS, code); },
    apiError: function (code) { return pick(API_ERRORS, code); },
  };
});
