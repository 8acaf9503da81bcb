// What every part of the console page shares: finding and making elements (every value from the
// server goes in as text: textContent, never HTML), ages, JSON as the server wrote it, the API.
var mongo2pcUi = (function () {
  'use strict';
  var TOKEN_HEADER = 'X-Mongo2pc-Token';
  var state = { token: null };

  function $(id) { return document.getElementById(id); }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }

  function json(value) { return value === null || value === undefined ? '' : mongo2pcNumbers.stringify(value, 1); }

  function age(exact) {
    if (exact === null || exact === undefined) { return '–'; }
    var seconds = Number(exact);
    var s = Math.floor(seconds);
    if (s < 60) { return seconds.toFixed(1) + 's'; }
    if (s < 3600) { return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's'; }
    if (s < 86400) { return Math.floor(s / 3600) + 'h' + String(Math.floor(s % 3600 / 60)).padStart(2, '0') + 'm'; }
    return Math.floor(s / 86400) + 'd' + String(Math.floor(s % 86400 / 3600)).padStart(2, '0') + 'h';
  }

  // A link that opens one transaction (the page listens for clicks on a[data-id]).
  function txLink(id) {
    var a = el('a', id);
    a.href = '#';
    a.dataset.id = String(id);
    return a;
  }

  function api(method, path) {
    var headers = { 'Accept': 'application/json' };
    headers[TOKEN_HEADER] = state.token || 'none'; // actions need the header even when the console has no token
    return fetch(path, { method: method, headers: headers, cache: 'no-store', credentials: 'omit' })
      .then(function (res) {
        return res.text().then(function (text) {
          try { return mongo2pcNumbers.parse(text); } catch (e) { return null; }
        }).then(function (body) {
          if (!res.ok) {
            var err = new Error(body && body.error ? body.error : 'HTTP ' + res.status);
            err.status = res.status;
            err.code = body && body.code;
            throw err;
          }
          return body;
        });
      });
  }

  return { $: $, el: el, json: json, age: age, txLink: txLink, api: api, state: state };
}());
