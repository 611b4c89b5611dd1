// Sorting of xfpx's report tables: a click on a column header sorts by that
// column (again: the other way). The address's `#sort=TABLE:COLUMN[:desc]`
// sorts one table on load by the same clicks. Script errors are kept in the
// body's data-error attribute; its data-ready attribute turns 1 when this
// script has run to its end.
(function () {
  "use strict";
  window.addEventListener("error", function (e) {
    document.body.setAttribute("data-error", String(e.message));
  });
  function key(cell, numeric) {
    var v = cell.getAttribute("data-v");
    if (v === null) v = cell.textContent;
    return numeric ? parseFloat(v) : v.toLowerCase();
  }
  function sortBy(th) {
    var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    var table = th.closest("table");
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute("data-type") === "num";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "ascending" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable th"), function (th) {
    th.addEventListener("click", function () { sortBy(th); });
  });
  var m = /sort=([A-Za-z0-9_-]+):([A-Za-z0-9_-]+)(:desc)?/.exec(window.location.hash);
  if (m) {
    var th = document.querySelector("#" + m[1] + " th[data-col='" + m[2] + "']");
    if (th) {
      th.click();
      if (m[3]) th.click();
    }
  }
  document.body.setAttribute("data-ready", "1");
})();
