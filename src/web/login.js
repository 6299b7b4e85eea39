/*
 * The login page (spec 1.1.1, 1.1.15-16, 1.5, 1.6.2-1.6.6, 1.9): email first; discovery by
 * email may offer the organization's provider instead of the password; partner branding and
 * the partner sign-in button come from /auth/login-context; the MFA step; the return from an
 * SSO round trip with #ssoCode=; and every ?error= of the callback as a sentence.
 */
(function () {
  'use strict';

  var Contrast = window.RmmContrast;
  var Messages = window.RmmMessages;
  var Session = window.RmmSession;

  var LANDING_PAGE = '/app';
  // SSO round trips come back here, where the #ssoCode= fragment is exchanged for tokens.
  var RETURN_PATH = '/login';
  var DEFAULT_LINK_COLOUR = '#1d4ed8';

  var el = function (id) { return document.getElementById(id); };
  var state = { step: 'email', mfaToken: null, busy: false };

  function sameOriginPath(path) {
    return typeof path === 'string' && path.charAt(0) === '/' && path.charAt(1) !== '/' && path.indexOf('\\') === -1;
  }

  /** The login start URL, asking the service to send the browser back to this page. */
  function loginStartUrl(loginUrl) {
    var url = new URL(loginUrl, window.location.origin);
    url.searchParams.set('redirect', RETURN_PATH);
    return url.pathname + url.search;
  }

  function announce(message) {
    el('status').textContent = message;
  }

  function clearError() {
    var box = el('error');
    box.hidden = true;
    box.textContent = '';
    ['email', 'password', 'mfa-code'].forEach(function (id) {
      el(id).removeAttribute('aria-invalid');
      el(id).removeAttribute('aria-errormessage');
    });
  }

  /** Shows a sentence in the live region; marks and focuses the input at fault, if any. */
  function showError(message, input) {
    var box = el('error');
    box.textContent = message;
    box.hidden = false;
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-errormessage', 'error');
      input.focus();
    }
  }

  function setBusy(busy) {
    state.busy = busy;
    el('submit').disabled = busy;
    el('mfa-submit').disabled = busy;
    el('main').setAttribute('aria-busy', busy ? 'true' : 'false');
  }

  function setStep(step) {
    state.step = step;
    var email = el('email');
    var afterEmail = step !== 'email';
    email.readOnly = afterEmail;
    el('change-email').hidden = !afterEmail || step === 'mfa';
    el('login-form').hidden = step === 'mfa';
    el('password-field').hidden = step !== 'password';
    el('password').required = step === 'password';
    el('submit').hidden = step === 'sso';
    el('submit').textContent = step === 'password' ? 'Sign in' : 'Continue';
    el('sso-choice').hidden = step !== 'sso';
    el('mfa-form').hidden = step !== 'mfa';
    if (step === 'email') { el('password').value = ''; email.focus(); }
    if (step === 'password') { el('password').focus(); announce('Enter your password.'); }
    if (step === 'sso') { el('sso-button').focus(); announce('Your organization signs in with ' + el('sso-name').textContent + '.'); }
    if (step === 'mfa') { el('mfa-code').value = ''; el('mfa-code').focus(); announce('Enter your authentication code.'); }
  }

  function signedIn(pair) {
    Session.save(pair);
    announce('Signed in. Loading…');
    window.location.assign(LANDING_PAGE);
  }

  function apiError(res) {
    if (res.status === 0) return Messages.apiError('network_error');
    if (res.status === 429) return Messages.apiError('rate_limited');
    return Messages.apiError(res.body && res.body.code);
  }

  function discover(email) {
    setBusy(true);
    return Session.request('POST', '/auth/sso-discovery', { email: email }).then(function (res) {
      setBusy(false);
      var sso = res.ok && res.body ? res.body.sso : null;
      // Discovery is a convenience (spec 1.5.6): any other answer leads to the password.
      if (sso && typeof sso.providerName === 'string' && sameOriginPath(sso.loginUrl)) {
        el('sso-name').textContent = sso.providerName;
        el('sso-button').href = loginStartUrl(sso.loginUrl);
        setStep('sso');
      } else {
        setStep('password');
      }
    });
  }

  function passwordLogin(email, password) {
    setBusy(true);
    return Session.request('POST', '/auth/login', { email: email, password: password }).then(function (res) {
      setBusy(false);
      if (res.ok && res.body && res.body.mfaRequired) {
        state.mfaToken = res.body.mfaToken;
        setStep('mfa');
      } else if (res.ok && res.body && res.body.accessToken) {
        signedIn(res.body);
      } else {
        el('password').value = '';
        showError(apiError(res), el('password'));
      }
    });
  }

  function verifyMfa(code) {
    setBusy(true);
    return Session.request('POST', '/auth/mfa/verify', { mfaToken: state.mfaToken, code: code }).then(function (res) {
      setBusy(false);
      if (res.ok && res.body && res.body.accessToken) return signedIn(res.body);
      if (res.body && res.body.code === 'invalid_mfa_token') {
        setStep('password');
        return showError(apiError(res), el('password'));
      }
      el('mfa-code').value = '';
      showError(apiError(res), el('mfa-code'));
    });
  }

  function onLoginSubmit(event) {
    event.preventDefault();
    if (state.busy) return;
    clearError();
    var email = el('email');
    email.value = email.value.trim();
    if (!email.value || !email.validity.valid) return showError('Enter a valid email address, like name@example.com.', email);
    if (state.step === 'email') return discover(email.value);
    if (state.step === 'password') {
      if (!el('password').value) return showError('Enter your password.', el('password'));
      return passwordLogin(email.value, el('password').value);
    }
  }

  function onMfaSubmit(event) {
    event.preventDefault();
    if (state.busy) return;
    clearError();
    var code = el('mfa-code').value.replace(/\s+/g, '');
    if (!/^\d{6}$/.test(code)) return showError('Enter the 6-digit code from your authenticator app.', el('mfa-code'));
    verifyMfa(code);
  }

  function applyBranding(branding) {
    if (!branding) return;
    var root = document.documentElement;
    if (Contrast.isHexColour(branding.accentColor)) {
      root.style.setProperty('--accent', branding.accentColor);
      root.style.setProperty('--on-accent', Contrast.readableTextOn(branding.accentColor));
      root.style.setProperty('--accent-text', Contrast.accentAsText(branding.accentColor, '#ffffff', DEFAULT_LINK_COLOUR));
    }
    var shown = false;
    if (typeof branding.headline === 'string' && branding.headline) {
      el('brand-headline').textContent = branding.headline;
      el('brand-headline').hidden = false;
      shown = true;
    }
    if (typeof branding.logoUrl === 'string' && /^(https:\/\/|data:image\/(png|jpeg|webp);base64,)/.test(branding.logoUrl)) {
      var logo = el('brand-logo');
      // With a headline beside it the logo is decoration; alone, it names the company.
      logo.alt = shown ? '' : 'Company logo';
      logo.addEventListener('error', function () { logo.hidden = true; });
      logo.src = branding.logoUrl;
      logo.hidden = false;
      shown = true;
    }
    el('brand').hidden = !shown;
  }

  function applyPartnerSso(partnerSso) {
    if (!partnerSso || typeof partnerSso.providerName !== 'string' || !sameOriginPath(partnerSso.loginUrl)) return;
    el('partner-sso-name').textContent = partnerSso.providerName;
    el('partner-sso-button').href = loginStartUrl(partnerSso.loginUrl);
    el('partner-sso').hidden = false;
    if (partnerSso.enforceSSO) {
      // Enforcement is server-side per user (spec 1.6.6); the form stays one click away for the others.
      var toggle = el('password-toggle');
      el('partner-divider').hidden = true;
      el('password-area').hidden = true;
      toggle.hidden = false;
      toggle.addEventListener('click', function () {
        var open = el('password-area').hidden;
        el('password-area').hidden = !open;
        toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
        if (open) el('email').focus();
      });
    }
  }

  function loadContext() {
    return Session.request('GET', '/auth/login-context').then(function (res) {
      if (!res.ok || !res.body) return;
      applyBranding(res.body.branding);
      applyPartnerSso(res.body.partnerSso);
    });
  }

  /** Back from the IdP: the one-time code travels in the fragment and is exchanged at once. */
  function exchangeSsoCode() {
    var match = /(?:^#|&)ssoCode=([^&]+)/.exec(window.location.hash);
    if (!match) return false;
    var code = decodeURIComponent(match[1]);
    // Out of the address bar and history before anything else can read it.
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    announce('Completing sign-in…');
    setBusy(true);
    Session.request('POST', '/sso/exchange', { code: code }).then(function (res) {
      setBusy(false);
      if (res.ok && res.body && res.body.accessToken) return signedIn(res.body);
      showError(res.status === 400 ? Messages.apiError('invalid_exchange_code') : apiError(res));
    });
    return true;
  }

  function showRedirectError() {
    var params = new URLSearchParams(window.location.search);
    if (params.has('error')) showError(Messages.callbackError(params.get('error')));
    else if (params.has('ssoLinkError')) showError(Messages.linkError(params.get('ssoLinkError')));
  }

  function init() {
    el('login-form').addEventListener('submit', onLoginSubmit);
    el('mfa-form').addEventListener('submit', onMfaSubmit);
    el('change-email').addEventListener('click', function () { clearError(); setStep('email'); });
    el('use-password').addEventListener('click', function () { clearError(); setStep('password'); });
    el('mfa-restart').addEventListener('click', function () { clearError(); state.mfaToken = null; setStep('email'); });
    showRedirectError();
    var exchanging = exchangeSsoCode();
    loadContext().then(function () {
      if (!exchanging) el('main').setAttribute('aria-busy', 'false');
      if (exchanging) return;
      if (!el('password-area').hidden) el('email').focus();
      else el('partner-sso-button').focus();
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
