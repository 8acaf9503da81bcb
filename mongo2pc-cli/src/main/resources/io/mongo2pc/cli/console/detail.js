// One transaction in full, beside the list: its fields, the refused operation, each operation with
// its document as stored now, what was done by hand (and by whom), its history and its document.
var mongo2pcDetail = (function (ui) {
  'use strict';
  var $ = ui.$;
  var el = ui.el;

  function field(list, name, value) {
    list.appendChild(el('dt', name));
    list.appendChild(el('dd', value === null || value === undefined ? '–' : value));
  }

  function ref(op) { return op.target + '/' + op.db + '.' + op.coll + '/' + op.id; }

  function latency(tx) {
    if (!tx.startedAt || !tx.committedAt) { return null; }
    return (Date.parse(tx.committedAt) - Date.parse(tx.startedAt)) + ' ms (asked for at ' + tx.startedAt + ')';
  }

  function show(tx) {
    $('detail-none').hidden = true;
    $('detail-body').hidden = false;
    $('detail-id').textContent = String(tx.id);
    var f = document.createDocumentFragment();
    field(f, 'state', tx.state + (tx.stale ? ' (stale: its owner\u2019s lease has run out)' : ''));
    field(f, 'owner', tx.owner);
    field(f, 'application', tx.application);
    field(f, 'epoch', tx.epoch);
    field(f, 'lease', tx.lease === null ? null : tx.lease + 's, until ' + tx.leaseEnds);
    field(f, 'last changed', tx.lastModified === null ? null : tx.lastModified + ' (' + ui.age(tx.age) + ' ago)');
    if (tx.committedAt) { field(f, 'committed', tx.committedAt + ', after ' + latency(tx)); }
    field(f, 'reason', tx.reason);
    field(f, 'code', tx.code);
    if (tx.failedOperation) {
      field(f, 'refused operation', '#' + tx.failedOperation.index + ' on ' + ref(tx.failedOperation));
    }
    $('detail-fields').replaceChildren(f);
    $('detail-cancel').hidden = !tx.canCancel;
    var ops = document.createDocumentFragment();
    tx.operations.forEach(function (op, i) {
      var refused = tx.failedOperation && Number(tx.failedOperation.index) === i;
      var box = el('div', undefined, 'op' + (refused ? ' failed' : ''));
      var head = el('div', undefined, 'op-head');
      head.appendChild(el('span', '#' + i + ' ' + op.op, 'op-kind'));
      head.appendChild(el('span', op.target + '/' + op.db + '.' + op.coll + '/' + op.docId, 'mono'));
      var p = op.participant;
      head.appendChild(el('span', 'marker: ' + (p.error ? '?' : !p.exists ? 'no document' : p.marker ? 'yes' : 'no'), 'muted small'));
      if (refused) { head.appendChild(el('span', 'refused', 'badge')); }
      box.appendChild(head);
      var parts = el('div', undefined, 'op-parts');
      [['change', op.change], ['guard', op.guard]].forEach(function (part) {
        var cell = el('div');
        cell.appendChild(el('span', part[0], 'label'));
        cell.appendChild(el('pre', part[1] === null || part[1] === undefined ? '–' : mongo2pcNumbers.stringify(part[1])));
        parts.appendChild(cell);
      });
      box.appendChild(parts);
      box.appendChild(el('span', 'document as stored now', 'label'));
      box.appendChild(el('pre', p.error ? p.error : p.exists ? ui.json(p.document) : '(does not exist)', p.error ? 'error' : ''));
      ops.appendChild(box);
    });
    if (!tx.operations.length) {
      ops.appendChild(el('p', 'no operations mongo2pc can read: see the stored document', 'muted'));
    }
    $('detail-ops').replaceChildren(ops);
    var actions = document.createDocumentFragment();
    (tx.actions || []).forEach(function (a) { actions.appendChild(el('li', a.action + ' by ' + a.by + ' at ' + a.at)); });
    $('detail-actions').replaceChildren(actions);
    var history = document.createDocumentFragment();
    if (tx.startedAt) { history.appendChild(el('li', 'asked for at ' + tx.startedAt)); }
    if (tx.committedAt) { history.appendChild(el('li', 'committed at ' + tx.committedAt)); }
    tx.history.forEach(function (h) { history.appendChild(el('li', h.state + (h.at ? ' at ' + h.at : ''))); });
    $('detail-history').replaceChildren(history);
    $('detail-document').textContent = ui.json(tx.document);
  }

  function close() {
    $('detail-none').hidden = false;
    $('detail-body').hidden = true;
  }

  return { show: show, close: close };
}(mongo2pcUi));
