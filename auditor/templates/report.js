// Sort any table.sortable by clicking a header; filter checks by status.
(function () {
  function key(td) {
    var t = (td && td.getAttribute("data-v")) || (td ? td.textContent.trim() : "");
    var n = parseFloat(t.replace(/,/g, "").replace(/%$/, ""));
    return isNaN(n) ? t.toLowerCase() : n;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, i) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var asc = th.getAttribute("data-dir") !== "asc";
        table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", asc ? "asc" : "desc");
        rows.sort(function (a, b) {
          var x = key(a.cells[i]), y = key(b.cells[i]);
          if (typeof x !== typeof y) { x = String(x); y = String(y); }
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll(".toolbar button").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var want = btn.getAttribute("data-status");
      document.querySelectorAll(".toolbar button").forEach(function (b) { b.classList.remove("on"); });
      btn.classList.add("on");
      document.querySelectorAll("[data-check-status]").forEach(function (el) {
        var s = el.getAttribute("data-check-status");
        el.style.display = (want === "all" || s === want) ? "" : "none";
      });
    });
  });
})();
