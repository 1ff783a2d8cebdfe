(function () {
  "use strict";
  var errors = document.getElementById("kubedra-errors");
  function record(msg) {
    if (!errors) { return; }
    var li = document.createElement("li");
    li.textContent = String(msg);
    errors.appendChild(li);
    errors.hidden = false;
  }
  window.addEventListener("error", function (e) { record(e.message || "error"); });
  window.addEventListener("unhandledrejection", function (e) { record("unhandled rejection: " + e.reason); });
  try {
    var inputs = document.querySelectorAll("input.filter");
    Array.prototype.forEach.call(inputs, function (input) {
      var table = input.nextElementSibling;
      if (!table || table.tagName !== "TABLE") { return; }
      input.addEventListener("input", function () {
        var q = input.value.toLowerCase();
        Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
          row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) < 0;
        });
      });
    });
    // a printed report (runbook) shows every folded section; the reader's folding comes back afterwards
    var folded = [];
    window.addEventListener("beforeprint", function () {
      folded = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
      folded.forEach(function (d) { d.open = true; });
    });
    window.addEventListener("afterprint", function () {
      folded.forEach(function (d) { d.open = false; });
      folded = [];
    });
    var charts = document.querySelectorAll(".chart svg");
    document.body.setAttribute("data-charts", String(charts.length));
    document.body.setAttribute("data-tables", String(document.querySelectorAll("table.data").length));
  } catch (err) {
    record(err && err.message ? err.message : err);
  }
  document.body.setAttribute("data-ready", "1");
})();
