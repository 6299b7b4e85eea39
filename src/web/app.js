/*
 * The signed-in landing page (/app) and the profile page (/settings/profile): who the stored
 * session belongs to, sign-out, and on the profile page the outcome of linking an identity
 * provider account (?ssoLinked=1 or ?ssoLinkError=, docs/sso-login.md).
 */
(function () {
  'use strict';

  var Session = window.RmmSession;
  var el = function (id) { return document.getElementById(id); };

  function toLogin() {
    window.location.replace('/login');
  }

  function scopeText(session) {
    if (session.scope === 'partner') return 'Partner (all organizations you are assigned to)';
    if (session.scope === 'system') return 'System';
    return 'Organization';
  }

  function render(me) {
    el('who-email').textContent = me.user.email;
    el('who-name').textContent = me.user.name || '—';
    el('who-scope').textContent = scopeText(me.session);
    el('who-mfa').textContent = me.session.mfa ? 'Verified for this session' : 'Not verified for this session';
    el('who').hidden = false;
    el('sign-out').hidden = false;
    // The list now shows it; the live region still tells screen-reader users the page is ready.
    el('status').className = 'visually-hidden';
    el('status').textContent = 'Signed in as ' + me.user.email + '.';
    el('main').setAttribute('aria-busy', 'false');
  }

  function signOut() {
    el('sign-out').disabled = true;
    Session.authed('POST', '/auth/logout').then(function () {
      Session.clear();
      toLogin();
    });
  }

  function showLinkOutcome() {
    var notice = el('notice');
    if (!notice) return;
    var params = new URLSearchParams(window.location.search);
    if (params.get('ssoLinked') === '1') {
      notice.className = 'notice';
      notice.textContent = 'Your identity provider account is now linked. You can sign in with it from now on.';
    } else if (params.has('ssoLinkError')) {
      notice.textContent = window.RmmMessages.linkError(params.get('ssoLinkError'));
    } else {
      return;
    }
    notice.hidden = false;
  }

  function init() {
    if (!Session.hasSession()) return toLogin();
    showLinkOutcome();
    el('sign-out').addEventListener('click', signOut);
    Session.authed('GET', '/auth/me').then(function (res) {
      if (res.ok && res.body && res.body.user) return render(res.body);
      Session.clear();
      toLogin();
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
