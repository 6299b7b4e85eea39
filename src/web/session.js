/*
 * The signed-in state of the browser pages: the token pair lives in sessionStorage (gone when
 * the tab closes, never sent automatically like a cookie), and API calls carry the access
 * token, refreshing it once when it has expired.
 */
(function (root) {
  'use strict';

  var ACCESS = 'rmm.accessToken';
  var REFRESH = 'rmm.refreshToken';
  var API = '/api/v1';

  function save(pair) {
    sessionStorage.setItem(ACCESS, pair.accessToken);
    sessionStorage.setItem(REFRESH, pair.refreshToken);
  }

  function clear() {
    sessionStorage.removeItem(ACCESS);
    sessionStorage.removeItem(REFRESH);
  }

  function hasSession() {
    return !!sessionStorage.getItem(ACCESS);
  }

  /** JSON request to the API: resolves { ok, status, body }; a network failure resolves status 0. */
  function request(method, path, body, token) {
    var headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = 'Bearer ' + token;
    return fetch(API + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' })
      .then(function (res) {
        return res.text().then(function (text) {
          var parsed = null;
          try { parsed = text ? JSON.parse(text) : null; } catch (e) { parsed = null; }
          return { ok: res.ok, status: res.status, body: parsed };
        });
      })
      .catch(function () { return { ok: false, status: 0, body: null }; });
  }

  function refresh() {
    var token = sessionStorage.getItem(REFRESH);
    if (!token) return Promise.resolve(false);
    return request('POST', '/auth/refresh', { refreshToken: token }).then(function (res) {
      if (!res.ok || !res.body || !res.body.accessToken) { clear(); return false; }
      save(res.body);
      return true;
    });
  }

  /** An authenticated call; on 401 it refreshes the pair once and retries. */
  function authed(method, path, body) {
    return request(method, path, body, sessionStorage.getItem(ACCESS)).then(function (res) {
      if (res.status !== 401) return res;
      return refresh().then(function (ok) { return ok ? request(method, path, body, sessionStorage.getItem(ACCESS)) : res; });
    });
  }

  root.RmmSession = { save: save, clear: clear, hasSession: hasSession, request: request, authed: authed };
})(self);
