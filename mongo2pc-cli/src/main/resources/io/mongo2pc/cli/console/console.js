// The mongo2pc console page: polls the JSON API and draws what it returns. Every value from the
// server is put in the page as text (textContent, SVG text), never parsed as HTML.
(function () {
  'use strict';
  var REFRESH_MS = 1500;
  var TOKEN_HEADER = 'X-Mongo2pc-Token';
  var token = null;
  var view = { cursor: null, older: [], next: null, detailId: null, timer: null, busy: false };

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

  // ---- the API ------------------------------------------------------------------------------

  function api(method, path) {
    var headers = { 'Accept': 'application/json' };
    headers[TOKEN_HEADER] = token || 'none'; // actions need the header even when the console has no token
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

  // The address may carry #token=SECRET (kept in this tab, then taken out of the address bar and
  // its history) and #tx=ID (that transaction opened in full: a link to give a colleague).
  function readHash() {
    var match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (match) {
      sessionStorage.setItem('mongo2pc.token', decodeURIComponent(match[1]));
      var rest = location.hash.replace(/(?:^#|&)token=[^&]+/, '').replace(/^&/, '');
      history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
    }
    token = sessionStorage.getItem('mongo2pc.token');
    var tx = /(?:^#|&)tx=([^&]+)/.exec(location.hash);
    if (tx) { view.detailId = decodeURIComponent(tx[1]); }
  }

  function banner(text) {
    var b = $('banner');
    b.textContent = text || '';
    b.hidden = !text;
  }

  // ---- status and charts --------------------------------------------------------------------

  function showStatus(s) {
    ['initial', 'pending', 'applied', 'done', 'canceling', 'canceled', 'markers'].forEach(function (k) {
      $('count-' + k).textContent = String(s[k]);
    });
    var link = $('oldest-open-id');
    if (s.oldestOpenId === null) {
      $('oldest-open').textContent = 'none';
      link.textContent = '';
    } else {
      $('oldest-open').textContent = age(s.oldestOpenSeconds);
      link.textContent = String(s.oldestOpenId);
      link.dataset.id = String(s.oldestOpenId);
    }
    $('oldest-open').parentNode.classList.toggle('alert', s.oldestOpenSeconds > 60);
  }

  function showMetrics(m) {
    mongo2pcChart.draw($('chart-throughput'), m.points, [{ key: 'committedPerSecond', cls: 'committed' },
      { key: 'canceledPerSecond', cls: 'canceled' }], m.windowSeconds);
    mongo2pcChart.draw($('chart-latency'), m.points, [{ key: 'latencyP50Ms', cls: 'p50' }, { key: 'latencyMaxMs', cls: 'max' }],
      m.windowSeconds);
  }

  // ---- the transactions table ---------------------------------------------------------------

  function filterQuery() {
    var form = $('filters');
    var params = new URLSearchParams();
    Array.prototype.forEach.call(form.querySelectorAll('input[name=state]:checked'), function (c) {
      params.append('state', c.value);
    });
    ['olderThan', 'owner', 'app', 'id'].forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (value) { params.set(name, value); }
    });
    params.set('limit', '20');
    if (view.cursor) { params.set('after', view.cursor); }
    return params.toString();
  }

  function showTransactions(page) {
    var body = $('transactions').tBodies[0];
    var rows = document.createDocumentFragment();
    page.transactions.forEach(function (tx) {
      var tr = el('tr');
      tr.dataset.id = String(tx.id);
      if (tx.stale) { tr.className = 'stale'; }
      if (view.detailId === String(tx.id)) { tr.classList.add('selected'); }
      tr.appendChild(el('td', tx.id, 'id'));
      var state = el('td', tx.state, 'state-' + tx.state);
      if (tx.stale) { state.appendChild(el('span', 'stale', 'badge')); }
      tr.appendChild(state);
      tr.appendChild(el('td', age(tx.age)));
      tr.appendChild(el('td', tx.owner === null ? '–' : tx.owner, 'small owner'));
      tr.appendChild(el('td', tx.application === null ? '–' : tx.application));
      tr.appendChild(el('td', tx.epoch));
      var detail = tx.reason !== null ? (tx.code ? tx.code + ': ' : '') + tx.reason
        : tx.source !== null ? tx.source + ' → ' + tx.destination + ' ' + tx.value : '';
      tr.appendChild(el('td', detail));
      rows.appendChild(tr);
    });
    if (!page.transactions.length) {
      var empty = el('tr');
      var td = el('td', view.cursor ? 'no more transactions' : 'no transactions match', 'muted');
      td.colSpan = 7;
      empty.appendChild(td);
      rows.appendChild(empty);
    }
    body.replaceChildren(rows);
    view.next = page.more ? page.next : null;
    $('page-next').disabled = !view.next;
    $('page-prev').disabled = !view.older.length;
    $('page-first').disabled = !view.older.length;
    $('page-info').textContent = 'page ' + (view.older.length + 1) + (page.more ? ', more older' : '');
  }

  // ---- one transaction ----------------------------------------------------------------------

  function field(list, name, value) {
    list.appendChild(el('dt', name));
    list.appendChild(el('dd', value === null || value === undefined ? '–' : value));
  }

  function showDetail(tx) {
    $('detail').hidden = false;
    $('detail-id').textContent = String(tx.id);
    var f = document.createDocumentFragment();
    field(f, 'state', tx.state + (tx.stale ? ' (stale: its owner\u2019s lease has run out)' : ''));
    field(f, 'owner', tx.owner);
    field(f, 'application', tx.application);
    field(f, 'epoch', tx.epoch);
    field(f, 'lease', tx.lease === null ? null : tx.lease + 's, until ' + tx.leaseEnds);
    field(f, 'last changed', tx.lastModified === null ? null : tx.lastModified + ' (' + age(tx.age) + ' ago)');
    field(f, 'reason', tx.reason);
    field(f, 'code', tx.code);
    $('detail-fields').replaceChildren(f);
    $('detail-cancel').hidden = !tx.canCancel;
    var ops = document.createDocumentFragment();
    tx.operations.forEach(function (op, i) {
      var tr = el('tr');
      tr.appendChild(el('td', i));
      tr.appendChild(el('td', op.op));
      tr.appendChild(el('td', op.target + '/' + op.db + '.' + op.coll + '/' + op.docId, 'mono'));
      var change = el('td'); change.appendChild(el('pre', json(op.change))); tr.appendChild(change);
      var guard = el('td'); guard.appendChild(el('pre', json(op.guard))); tr.appendChild(guard);
      var p = op.participant;
      tr.appendChild(el('td', p.error ? '?' : !p.exists ? 'no document' : p.marker ? 'yes' : 'no'));
      var doc = el('td');
      doc.appendChild(el('pre', p.error ? p.error : p.exists ? json(p.document) : '(does not exist)', p.error ? 'error' : ''));
      tr.appendChild(doc);
      ops.appendChild(tr);
    });
    if (!tx.operations.length) {
      var tr = el('tr');
      var td = el('td', 'no operations mongo2pc can read: see the stored document', 'muted');
      td.colSpan = 7; tr.appendChild(td); ops.appendChild(tr);
    }
    $('detail-ops').tBodies[0].replaceChildren(ops);
    var history = document.createDocumentFragment();
    tx.history.forEach(function (h) { history.appendChild(el('li', h.state + (h.at ? ' at ' + h.at : ''))); });
    $('detail-history').replaceChildren(history);
    $('detail-document').textContent = json(tx.document);
  }

  function openDetail(id) {
    view.detailId = String(id);
    return api('GET', '/api/transactions/' + encodeURIComponent(id)).then(showDetail).catch(function (e) {
      if (e.status === 404) { closeDetail(); result('transaction ' + id + ' no longer exists', true); return; }
      throw e;
    });
  }

  function closeDetail() {
    view.detailId = null;
    $('detail').hidden = true;
  }

  // ---- owners -------------------------------------------------------------------------------

  function showOwners(o) {
    var rows = document.createDocumentFragment();
    o.owners.forEach(function (owner) {
      var tr = el('tr', undefined, owner.stale ? 'stale' : '');
      var name = el('td', owner.owner === null ? '(none stored: another application)' : owner.owner, 'mono');
      if (owner.stale) { name.appendChild(el('span', 'stale', 'badge')); }
      tr.appendChild(name);
      tr.appendChild(el('td', owner.application === null ? '–' : owner.application));
      tr.appendChild(el('td', owner.count));
      tr.appendChild(el('td', owner.leaseEnds === null ? '–' : owner.leaseEnds));
      var ids = el('td', undefined, 'mono');
      owner.transactions.forEach(function (id, i) {
        if (i) { ids.appendChild(document.createTextNode(' ')); }
        var a = el('a', id);
        a.href = '#';
        a.dataset.id = String(id);
        ids.appendChild(a);
      });
      tr.appendChild(ids);
      rows.appendChild(tr);
    });
    if (!o.owners.length) {
      var tr = el('tr'); var td = el('td', 'no owner holds a lease now', 'muted'); td.colSpan = 5;
      tr.appendChild(td); rows.appendChild(tr);
    }
    $('owners').tBodies[0].replaceChildren(rows);
  }

  // ---- actions ------------------------------------------------------------------------------

  function confirmAction(text) {
    return new Promise(function (resolve) {
      var dialog = $('confirm');
      $('confirm-text').textContent = text;
      function done(answer) {
        $('confirm-yes').removeEventListener('click', yes);
        $('confirm-no').removeEventListener('click', no);
        dialog.close();
        resolve(answer);
      }
      function yes() { done(true); }
      function no() { done(false); }
      $('confirm-yes').addEventListener('click', yes);
      $('confirm-no').addEventListener('click', no);
      dialog.showModal();
    });
  }

  function result(text, isError) {
    var r = $('action-result');
    r.textContent = text;
    r.className = isError ? 'error' : '';
  }

  function act(question, method, path, describe) {
    return confirmAction(question).then(function (yes) {
      if (!yes) { result('nothing done'); return; }
      return api(method, path).then(function (body) { result(describe(body)); })
        .catch(function (e) { result(e.message + (e.code ? ' (' + e.code + ')' : ''), true); })
        .then(refresh);
    });
  }

  // ---- refresh ------------------------------------------------------------------------------

  function refresh() {
    if (view.busy) { return Promise.resolve(); }
    view.busy = true;
    clearTimeout(view.timer);
    var calls = [
      api('GET', '/api/status').then(showStatus),
      api('GET', '/api/metrics').then(showMetrics),
      api('GET', '/api/transactions?' + filterQuery()).then(showTransactions),
      api('GET', '/api/owners').then(showOwners)
    ];
    if (view.detailId !== null) { calls.push(openDetail(view.detailId)); }
    return Promise.allSettled(calls).then(function (results) {
      var failed = results.filter(function (r) { return r.status === 'rejected'; }).map(function (r) { return r.reason; });
      var unauthorized = failed.some(function (e) { return e.status === 401; });
      $('token-panel').hidden = !unauthorized;
      if (unauthorized) {
        banner('This console needs its token.');
      } else if (failed.length) {
        var e = results[0].status === 'rejected' ? results[0].reason : failed[0]; // the status says it best
        var bad = failed.filter(function (f) { return f.status === 400; })[0];
        banner(bad ? 'Filter: ' + bad.message : e.status ? e.message : 'The console does not answer: ' + e.message);
      } else {
        banner(null);
      }
      $('updated').textContent = failed.length ? 'refresh failed at ' + new Date().toLocaleTimeString()
        : 'updated ' + new Date().toLocaleTimeString();
    }).finally(function () {
      view.busy = false;
      view.timer = setTimeout(refresh, REFRESH_MS);
    });
  }

  function wire() {
    $('filters').addEventListener('submit', function (e) {
      e.preventDefault();
      view.cursor = null; view.older = [];
      refresh();
    });
    $('filter-clear').addEventListener('click', function () {
      $('filters').reset();
      view.cursor = null; view.older = [];
      refresh();
    });
    $('page-next').addEventListener('click', function () {
      if (!view.next) { return; }
      view.older.push(view.cursor); view.cursor = view.next; refresh();
    });
    $('page-prev').addEventListener('click', function () {
      if (!view.older.length) { return; }
      view.cursor = view.older.pop(); refresh();
    });
    $('page-first').addEventListener('click', function () { view.cursor = null; view.older = []; refresh(); });
    $('transactions').addEventListener('click', function (e) {
      var tr = e.target.closest('tr');
      if (tr && tr.dataset.id !== undefined) { openDetail(tr.dataset.id).then(refresh); }
    });
    document.body.addEventListener('click', function (e) {
      var a = e.target.closest('a[data-id]');
      if (a) { e.preventDefault(); openDetail(a.dataset.id).then(refresh); }
    });
    $('detail-close').addEventListener('click', closeDetail);
    $('detail-cancel').addEventListener('click', function () {
      var id = view.detailId;
      act('Cancel transaction ' + id + '? Whatever it applied is undone. A transaction past its commit point, '
        + 'or held by a live owner, is not canceled.', 'POST', '/api/transactions/' + encodeURIComponent(id) + '/cancel',
        function (r) { return 'transaction ' + r.id + (r.alreadyCanceled ? ' was already canceled: ' : ' canceled: ') + r.reason; });
    });
    $('action-recover').addEventListener('click', function () {
      act('Run one recovery pass now? Open transactions whose owner\u2019s lease has run out are taken over and finished.',
        'POST', '/api/recover', function (r) {
          return 'recovery: ' + r.rolledForward + ' rolled forward, ' + r.canceled + ' canceled, ' + r.skipped
            + ' skipped (' + r.notStale + ' not stale yet, ' + r.failed + ' failed)';
        });
    });
    $('action-prune').addEventListener('click', function () {
      var older = $('prune-older-than').value.trim();
      act('Delete every done and canceled transaction unchanged for ' + older + '? They cannot be inspected afterwards.',
        'POST', '/api/prune?olderThan=' + encodeURIComponent(older),
        function (r) { return 'pruned ' + r.deleted + ' finished transaction(s) older than ' + older; });
    });
    $('token-form').addEventListener('submit', function (e) {
      e.preventDefault();
      token = $('token-input').value.trim();
      sessionStorage.setItem('mongo2pc.token', token);
      $('token-input').value = '';
      refresh();
    });
  }

  readHash();
  wire();
  refresh();
}());
