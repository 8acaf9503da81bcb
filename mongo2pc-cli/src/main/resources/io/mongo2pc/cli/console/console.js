// The mongo2pc console page: polls the JSON API and draws what it returns (the list is list.js's,
// one transaction detail.js's). Every value from the server is put in the page as text
// (textContent, SVG text), never parsed as HTML.
(function (ui, list, detail) {
  'use strict';
  var REFRESH_MS = 1500;
  var $ = ui.$;
  var el = ui.el;
  var api = ui.api;
  var view = { detailId: null, timer: null, busy: false, window: 'hour' };

  // The address may carry #token=SECRET (kept in this tab, then taken out of the address bar and
  // its history) and #tx=ID (that transaction opened in full: a link to give a colleague).
  function readHash() {
    var match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (match) {
      sessionStorage.setItem('mongo2pc.token', decodeURIComponent(match[1]));
      var rest = location.hash.replace(/(?:^#|&)token=[^&]+/, '').replace(/^&/, '');
      history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
    }
    ui.state.token = sessionStorage.getItem('mongo2pc.token');
    var tx = /(?:^#|&)tx=([^&]+)/.exec(location.hash);
    if (tx) { view.detailId = decodeURIComponent(tx[1]); }
  }

  function banner(text) {
    var b = $('banner');
    b.textContent = text || '';
    b.hidden = !text;
  }

  // ---- status, charts, warnings -------------------------------------------------------------

  function showStatus(s) {
    ['initial', 'pending', 'applied', 'done', 'canceling', 'canceled', 'markers'].forEach(function (k) {
      $('count-' + k).textContent = String(s[k]);
    });
    var link = $('oldest-open-id');
    if (s.oldestOpenId === null) {
      $('oldest-open').textContent = 'none';
      link.textContent = '';
    } else {
      $('oldest-open').textContent = ui.age(s.oldestOpenSeconds);
      link.textContent = String(s.oldestOpenId);
      link.dataset.id = String(s.oldestOpenId);
    }
    $('oldest-open').parentNode.classList.toggle('alert', Number(s.oldestOpenSeconds) > 60);
  }

  function showMetrics(m) {
    var windowSeconds = Number(m.windowSeconds);
    mongo2pcChart.draw($('chart-throughput'), m.points, [{ key: 'committedPerSecond', cls: 'committed' },
      { key: 'canceledPerSecond', cls: 'canceled' }], windowSeconds);
    mongo2pcChart.draw($('chart-latency'), m.points, [{ key: 'latencyP50Ms', cls: 'p50' }, { key: 'latencyMaxMs', cls: 'max' }],
      windowSeconds);
    var i = m.interactive;
    $('interactive').textContent = i.committed === 0 ? '' : 'interactive transactions committed: ' + i.committed
      + ', their bodies ran ' + i.attemptsPerTransaction + ' times each on average (most ' + i.attemptsMax + '; more than once: a conflict)';
    var from = m.historyFrom === null ? null : Date.parse(m.historyFrom);
    var start = Date.parse(m.points[0].at);
    $('history-from').textContent = from === null || from <= start ? 'read from the transactions collection'
      : 'from the transactions collection since ' + new Date(from).toLocaleString() + ' (the history before is still being read, or was pruned)';
  }

  function showWarnings(w) {
    var items = document.createDocumentFragment();
    w.warnings.forEach(function (warning) {
      var li = el('li', undefined, 'warning-' + warning.kind);
      li.appendChild(el('span', warning.kind, 'kind'));
      li.appendChild(document.createTextNode(warning.message));
      warning.ids.forEach(function (id) { li.appendChild(ui.txLink(id)); });
      items.appendChild(li);
    });
    $('warning-list').replaceChildren(items);
    $('warnings').hidden = !w.warnings.length;
  }

  function openDetail(id) {
    view.detailId = String(id);
    return api('GET', '/api/transactions/' + encodeURIComponent(id)).then(detail.show).catch(function (e) {
      if (e.status === 404) { closeDetail(); result('transaction ' + id + ' no longer exists', true); return; }
      throw e;
    });
  }

  function closeDetail() {
    view.detailId = null;
    detail.close();
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
        ids.appendChild(ui.txLink(id));
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
      api('GET', '/api/metrics?window=' + view.window).then(showMetrics),
      api('GET', '/api/transactions?' + list.query()).then(function (page) { list.show(page, view.detailId); }),
      api('GET', '/api/owners').then(showOwners),
      api('GET', '/api/warnings').then(showWarnings)
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

  function chartWindow(name) {
    view.window = name;
    ['hour', 'day'].forEach(function (w) {
      $('window-' + w).classList.toggle('on', w === name);
      $('window-' + w).setAttribute('aria-pressed', String(w === name));
    });
    refresh();
  }

  function wire() {
    list.wire(refresh);
    $('window-hour').addEventListener('click', function () { chartWindow('hour'); });
    $('window-day').addEventListener('click', function () { chartWindow('day'); });
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
      var path = '/api/prune?olderThan=' + encodeURIComponent(older);
      // First what it would do (nothing written), then the question with that count.
      api('GET', path).then(function (would) {
        if (would.done === 0) { result('nothing to prune: no done transaction unchanged for ' + older); return; }
        act('Prune ' + would.done + ' done transaction(s) unchanged for ' + older + '? Each leaves only its id and outcome'
          + ' (so its id still runs at most once); its operations cannot be inspected afterwards. '
          + would.canceledKept + ' canceled one(s) as old are kept (the CLI prunes them with --include-canceled).',
          'POST', path, function (r) { return 'pruned ' + r.deleted + ' done transaction(s) older than ' + older; });
      }).catch(function (e) { result(e.message + (e.code ? ' (' + e.code + ')' : ''), true); });
    });
    $('token-form').addEventListener('submit', function (e) {
      e.preventDefault();
      ui.state.token = $('token-input').value.trim();
      sessionStorage.setItem('mongo2pc.token', ui.state.token);
      $('token-input').value = '';
      refresh();
    });
  }

  readHash();
  wire();
  refresh();
}(mongo2pcUi, mongo2pcList, mongo2pcDetail));
