// Numbers exactly as the server wrote them. JSON.parse reads every number as a double, so
// 9223372036854775723 becomes 9223372036854776000 and a balance of 10.00 becomes 10. parse() keeps
// each number a double would change as an Exact (its text), which the page shows as written;
// stringify() writes it back as that number.
var mongo2pcNumbers = (function () {
  'use strict';
  var MARK = '\u0000exact';
  // a JSON string (skipped as it is) or a JSON number
  var TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

  // Shown as its text wherever it is put in a string ('' + x, String(x)); Number(x) and x > 1 read its
  // value (no valueOf of its own: a sum with a string must not go through a double).
  function Exact(text) { this.text = text; }
  Exact.prototype.toString = function () { return this.text; };

  function parse(text) {
    var marked = text.replace(TOKENS, function (token) {
      if (token.charAt(0) === '"' || String(Number(token)) === token) { return token; }
      return '{"\\u0000exact":"' + token + '"}';
    });
    return JSON.parse(marked, function (key, value) {
      if (value !== null && typeof value === 'object' && typeof value[MARK] === 'string' && Object.keys(value).length === 1) {
        return new Exact(value[MARK]);
      }
      return value;
    });
  }

  function stringify(value, indent) {
    var json = JSON.stringify(value, function (key, v) {
      return v instanceof Exact ? MARK + v.text : v;
    }, indent);
    return json === undefined ? '' : json.replace(/"\\u0000exact(-?[0-9.eE+]+)"/g, '$1');
  }

  return { parse: parse, stringify: stringify, Exact: Exact };
}());
