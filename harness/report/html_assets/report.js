// t3d-audit report.html: lazy thumbnails, sortable tables, filters. Plain JS, no requests.
(function () {
  "use strict";
  var thumbs = JSON.parse(document.getElementById("thumb-data").textContent);

  // Thumbnails: the data URI goes into src only when the image nears the viewport.
  function show(img) {
    var key = img.getAttribute("data-thumb");
    if (key && thumbs[key]) { img.src = thumbs[key]; img.removeAttribute("data-thumb"); }
  }
  var imgs = document.querySelectorAll("img[data-thumb]");
  if ("IntersectionObserver" in window) {
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (en) { if (en.isIntersecting) { show(en.target); io.unobserve(en.target); } });
    }, { rootMargin: "300px" });
    imgs.forEach(function (img) { io.observe(img); });
  } else {
    imgs.forEach(show);
  }

  // Sorting: numbers numerically (ignoring marks such as †, %, ×, ★), text alphabetically.
  function cellValue(row, i) {
    var cell = row.children[i];
    return cell ? cell.textContent.trim() : "";
  }
  function asNumber(text) {
    var m = text.replace(/\u2212/g, "-").match(/^[\[(]?\s*([-+]?\d*\.?\d+(?:e[-+]?\d+)?)/i);
    return m ? parseFloat(m[1]) : NaN;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, i) {
      var button = th.querySelector("button.sort");
      if (!button) {
        button = document.createElement("button");
        button.type = "button"; button.className = "sort";
        while (th.firstChild) { button.appendChild(th.firstChild); }
        th.appendChild(button);
      }
      button.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, i), y = cellValue(b, i), nx = asNumber(x), ny = asNumber(y), c;
          if (!isNaN(nx) && !isNaN(ny)) { c = nx - ny; }
          else if (!isNaN(nx)) { c = -1; } else if (!isNaN(ny)) { c = 1; }
          else { c = x.localeCompare(y); }
          return dir === "ascending" ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Filters: evaluator, failing only, prompt, and free text per table.
  var fEv = document.getElementById("f-ev");
  var fFail = document.getElementById("f-failing");
  var fPrompt = document.getElementById("f-prompt");
  function apply() {
    var ev = fEv.value, failing = fFail.checked, prompt = fPrompt ? fPrompt.value : "";
    document.querySelectorAll("[data-ev]").forEach(function (el) {
      var hide = (ev && el.getAttribute("data-ev") !== ev) ||
                 (failing && el.getAttribute("data-status") === "pass");
      el.classList.toggle("is-hidden", !!hide);
    });
    document.querySelectorAll("[data-prompt]").forEach(function (el) {
      el.classList.toggle("is-hidden", !!prompt && el.getAttribute("data-prompt") !== prompt);
    });
  }
  // The filters never submit (no inline handler: the page's CSP allows only this script).
  document.querySelector("form.filters").addEventListener("submit", function (ev) { ev.preventDefault(); });
  fEv.addEventListener("change", apply);
  fFail.addEventListener("change", apply);
  if (fPrompt) { fPrompt.addEventListener("change", apply); }
  document.querySelectorAll("input.rowfilter").forEach(function (input) {
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      var table = input.closest("details").querySelector("table");
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        r.hidden = !!q && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  });
  apply();
})();
