// Sort any table.sortable by clicking a header; filter checks by status; draw the charts.
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

// Charts: plotly.js figures stored as JSON in data-fig. plotly.js arrives compressed
// (window.auditorPlotly, a promise); then the charts in view are drawn first, every other
// chart on the page after them one at a time (so that a screenshot or a print shows them all),
// and a chart in a closed <details> or a filtered-out check when it is shown.
(function () {
  var charts = Array.prototype.slice.call(document.querySelectorAll("div.chart[data-fig]"));
  if (!charts.length) { return; }
  var config = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"]};
  function draw(el) {
    if (el.getAttribute("data-drawn")) { return; }
    el.setAttribute("data-drawn", "1");
    try {
      var fig = JSON.parse(el.getAttribute("data-fig"));
      window.Plotly.newPlot(el, fig.data, fig.layout, config);
    } catch (err) {
      el.className += " unavailable";
      el.textContent = "chart unavailable: " + err;
    }
  }
  function unavailable(why) {
    charts.forEach(function (el) {
      el.className += " unavailable"; el.textContent = "chart unavailable: " + why;
    });
  }
  function start() {
    window.addEventListener("beforeprint", function () { charts.forEach(draw); });
    if (!("IntersectionObserver" in window)) { charts.forEach(draw); return; }
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); }
      });
    }, {rootMargin: "300px"});
    charts.forEach(function (el) { seen.observe(el); });
    var shown = charts.filter(function (el) { return el.getClientRects().length > 0; });
    (function next(i) {
      if (i >= shown.length) { return; }
      setTimeout(function () { draw(shown[i]); next(i + 1); }, 0);
    })(0);
  }
  if (typeof window.Plotly !== "undefined") { start(); return; }
  if (!window.auditorPlotly) { unavailable("plotly.js did not load"); return; }
  window.auditorPlotly.then(start, function (err) { unavailable(err.message || err); });
})();
