// The transactions list of the console page: its filters (state, document, time range, age, owner,
// application, id), the table of one page, the total that match, and the pager.
var mongo2pcList = (function (ui) {
  'use strict';
  var $ = ui.$;
  var el = ui.el;
  var view = { cursor: null, older: [], next: null };

  // The typed "from" and "to": a duration ago goes as it is; a time typed without a zone is this
  // browser's local time, sent as an instant.
  function timeParam(text) {
    if (/^\d+(\.\d+)?(ms|s|m|h|d)$/i.test(text) || /Z$|[+-]\d\d:?\d\d$/.test(text)) { return text; }
    var local = new Date(text);
    return isNaN(local.getTime()) ? text : local.toISOString();
  }

  function query() {
    var form = $('filters');
    var params = new URLSearchParams();
    Array.prototype.forEach.call(form.querySelectorAll('input[name=state]:checked'), function (c) {
      params.append('state', c.value);
    });
    ['olderThan', 'owner', 'app', 'id', 'doc', 'from', 'to'].forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (value) { params.set(name, name === 'from' || name === 'to' ? timeParam(value) : value); }
    });
    params.set('limit', '20');
    if (view.cursor) { params.set('after', view.cursor); }
    return params.toString();
  }

  function detailText(tx) {
    if (tx.reason !== null) { return (tx.code ? tx.code + ': ' : '') + tx.reason; }
    return tx.source !== null ? tx.source + ' → ' + tx.destination + ' ' + tx.value : '';
  }

  function show(page, selectedId) {
    var rows = document.createDocumentFragment();
    page.transactions.forEach(function (tx) {
      var tr = el('tr');
      tr.dataset.id = String(tx.id);
      if (tx.stale) { tr.className = 'stale'; }
      if (selectedId === String(tx.id)) { tr.classList.add('selected'); }
      tr.appendChild(el('td', tx.id, 'id'));
      var state = el('td', tx.state, 'state-' + tx.state);
      if (tx.stale) { state.appendChild(el('span', 'stale', 'badge')); }
      tr.appendChild(state);
      tr.appendChild(el('td', ui.age(tx.age)));
      tr.appendChild(el('td', tx.owner === null ? '–' : tx.owner, 'small owner'));
      tr.appendChild(el('td', tx.epoch));
      tr.appendChild(el('td', detailText(tx), 'detail-cell'));
      rows.appendChild(tr);
    });
    if (!page.transactions.length) {
      var empty = el('tr');
      var td = el('td', view.cursor ? 'no more transactions' : 'no transactions match', 'muted');
      td.colSpan = 6;
      empty.appendChild(td);
      rows.appendChild(empty);
    }
    $('transactions').tBodies[0].replaceChildren(rows);
    var total = Number(page.total);
    $('total').textContent = total === 1 ? '1 transaction' : total + ' transactions';
    view.next = page.more ? page.next : null;
    $('page-next').disabled = !view.next;
    $('page-prev').disabled = !view.older.length;
    $('page-first').disabled = !view.older.length;
    var first = view.older.length * 20 + (page.transactions.length ? 1 : 0);
    $('page-info').textContent = page.transactions.length ? first + '–' + (first + page.transactions.length - 1) + ' of ' + total : '';
  }

  function wire(refresh) {
    function restart() { view.cursor = null; view.older = []; refresh(); }
    $('filters').addEventListener('submit', function (e) { e.preventDefault(); restart(); });
    $('filter-clear').addEventListener('click', function () { $('filters').reset(); restart(); });
    $('page-next').addEventListener('click', function () {
      if (!view.next) { return; }
      view.older.push(view.cursor); view.cursor = view.next; refresh();
    });
    $('page-prev').addEventListener('click', function () {
      if (!view.older.length) { return; }
      view.cursor = view.older.pop(); refresh();
    });
    $('page-first').addEventListener('click', restart);
  }

  return { query: query, show: show, wire: wire };
}(mongo2pcUi));
